# Runs one Swift server script with its configuration read from SWIFT_CONF_FILE (the test's
# own swift.conf) instead of /etc/swift/swift.conf, which Swift reads at import time.
import os, runpy, sys
import swift.common.utils as utils
utils.SWIFT_CONF_FILE = os.environ['SWIFT_CONF_FILE']
script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name='__main__')
