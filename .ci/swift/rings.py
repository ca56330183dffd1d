# Writes the three one-device rings (object, container, account) of the test Swift in one
# process: swift-ring-builder would take nine, each paying Swift's import time.
#   rings.py ETC_DIR OBJECT_PORT CONTAINER_PORT ACCOUNT_PORT
import sys
from swift.common.ring import RingBuilder

etc = sys.argv[1]
for name, port in zip(('object', 'container', 'account'), sys.argv[2:5]):
    # Partition power 6, one replica, min_part_hours 1: the smallest ring that works.
    builder = RingBuilder(6, 1, 1)
    builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': int(port),
                     'device': 'sdb1', 'weight': 1.0})
    builder.rebalance()
    builder.get_ring().save('%s/%s.ring.gz' % (etc, name))
