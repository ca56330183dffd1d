// `cairn serve`: take the data-directory lock, listen at once, open every authority, then swap
// the startup responder for the ready app. SIGTERM/SIGINT stop within --shutdown-seconds
// (docs/operations.md "Stopping"): in-flight requests finish, the commit queues drain, the lock
// is released, exit 0; a second signal exits at once. A compromised lock (refresh too late)
// stops the server with exit 3.
import { existsSync, promises as fsp } from 'node:fs';
import { Layout } from '../store/layout.js';
import { repositoriesHoldingSealed } from '../store/seal-key.js';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import { CairnService } from '../authority/service.js';
import { createApp, type RequestLog } from '../http/app.js';
import { PhasedServer } from '../http/server.js';
import { canonicalHost, canonicalOrigin, canonicalPublicUrl, RequestGuard } from '../http/request-guard.js';
import { buildAssetTable } from '../http/ui/assets.js';
import { HEADER_NAME, type UiOptions } from '../http/ui/routes.js';
import { parseTrustList, type IdentityOptions } from '../http/identity.js';
import { isLoopbackAddress, type PromoteAccess } from '../http/promote-access.js';
import { AccessBook } from '../authority/access.js';
import { TEAM_DEFAULT_RULES } from '../domain/workflow/repo-rules.js';
import { AccessGate, type AuthMode } from '../http/access-gate.js';
import { insecureOpenWarning, networkAddresses, openRefusal, type BindLookup } from './bind-policy.js';
import { lockDataDir } from '../store/datadir-lock.js';
import { DEFAULT_JOB_POLICY, type JobPolicy } from '../domain/jobs.js';
import { DEFAULT_EVENT_FEED_OPTIONS, type EventFeedOptions } from '../authority/event-feed.js';
import { DEFAULT_WEBHOOK_NETWORK, DEFAULT_WEBHOOK_POLICY, type Resolve, type WebhookPolicy } from '../authority/webhook-dispatcher.js';
import { Busy, Conflict, isCairnError } from '../domain/errors.js';
import { webhookTargets } from '../domain/webhook-targets.js';
import { credentialGrants } from '../domain/git-mirrors.js';
import { checkQueueOptions, DEFAULT_QUEUE_OPTIONS, type QueueOptions } from '../domain/workflow/land-queue.js';
import { CliUsageError, parseBind, parseCommandArgs, parseMaxSnapshotPaths } from './args.js';
import { DEFAULT_MAX_SNAPSHOT_PATHS } from '../domain/tree-size.js';
import { LogLineBatch, sinkOnFd } from './log-batch.js';
import { jsonRequestLog } from './request-log.js';
import { prettyStream } from './log-format.js';
import { swaggerUiAssets } from './docs-assets.js';
import { loadUiSources } from './ui-files.js';
import type { GitShadowSource } from '../authority/git-shadow.js';
import { DEFAULT_MIRROR_POLICY } from '../authority/git-mirror-runner.js';
import { Archiving, type ArchivingOptions } from '../authority/archiving.js';
import { openS3Store } from '../archive/s3-store.js';
import { archiveStore } from '../archive/encryption.js';
import { ObjectStoreError, type ObjectStore } from '../archive/object-store.js';
import { readArchiveId } from '../archive/generations.js';
import { canonicalArchiveUrl } from '../archive/archive-url.js';
import { DEFAULT_GRACE, parseDuration, parseRetention } from '../domain/archive-retention.js';
import { fencedRefusal, handedOverRefusal, readArchiveFile } from '../archive/archive-file.js';
import { Follower, type FollowOptions } from '../authority/follower.js';
import { WriterLease } from '../authority/writer-lease.js';
import { EtcdWriterLease, LeaseUrlError, parseLeaseUrl, type EtcdAccess, type LeaseLocation } from '../lease/etcd-lease.js';
import { ArchiveWriterLease } from '../lease/object-store-lease.js';
import { EtcdCluster, NODE_NAME, defaultNodeName } from '../lease/etcd-cluster.js';
import { ClusterMoves } from '../authority/cluster-moves.js';
import { ReadReplicas } from '../authority/replicas.js';
import type { LeaseBackend, WriterRecord } from '../lease/lease-backend.js';
import { DEFAULT_GIT_LIMITS, GitPlaces, type GitLimits } from '../http/git-places.js';

export const SERVE_HELP = `Usage: cairn serve [--bind HOST:PORT] [--data DIR] [--log-level LEVEL] [--log-format pretty|json]
                   [--lease-seconds N] [--max-attempts N] [--ci-timeout-seconds N]
                   [--no-ui] [--ui-identity-header NAME] [--trust-identity-from ADDR[,ADDR]]
                   [--trust-identity-secret-file FILE] [--webhook-attempts N]
                   [--webhook-allow CIDR|HOST]... [--webhook-disable-after N]
                   [--event-retention N] [--event-subscribers N] [--event-heartbeat-ms N]
                   [--event-subscribers-per-client N]
                   [--activation-delay-ms N] [--lock-stale-ms N] [--webhook-backoff-ms N]
                   [--queue-depth N] [--queue-retries N] [--queue-batch N]
                   [--queue-stall-seconds N] [--allowed-host NAME]... [--allowed-origin ORIGIN]...
                   [--public-url URL]
                   [--max-snapshot-paths N] [--shutdown-seconds N]
                   [--git-mirror-allow CIDR|HOST]... [--git-mirror-file-root DIR]
                   [--git-mirror-credential GRANT]... [--git-mirror-concurrency N]
                   [--git-mirror-per-repository N] [--git-mirror-stall-seconds N]
                   [--git-mirror-backoff-ms N] [--git-places N] [--git-places-per-client N]
                   [--git-places-per-repository N] [--git-queue-seconds N]
                   [--git-body-timeout-seconds N] [--git-body-min-rate BYTES]
                   [--archive s3://BUCKET[/PREFIX]]
                   [--archive-config FILE] [--archive-key-file FILE]
                   [--archive-interval-ms N]
                   [--archive-lag-warn-seconds N] [--archive-keep POLICY]
                   [--archive-prune-grace DURATION] [--archive-prune-every DURATION]
                   [--archive-verify-every DURATION]
                   [--archive-checkpoint-ranges N] [--archive-lease-seconds N]
                   [--archive-concurrency N] [--archive-sync]
                   [--archive-sync-timeout-seconds N] [--archive-manifest-chain N]
                   [--follow s3://BUCKET[/PREFIX]] [--follow-interval-ms N]
                   [--lease etcd://HOST:PORT/PREFIX|etcds://…|archive] [--lease-ttl N]
                   [--lease-ca-file FILE] [--lease-cert-file FILE] [--lease-key-file FILE]
                   [--lease-user NAME] [--lease-password-file FILE] [--failover auto|manual] [--failover-after N]
                   [--cluster etcd://HOST:PORT/PREFIX] [--node NAME] [--cluster-ttl N]
                   [--read-replicas all|I,J,...]
                   [--promote-secret-file FILE] [--auth tokens|none] [--insecure-open]
                   [--new-seal-key] [-h|--help]

Serve the cairn HTTP interface, and the reviewer web UI at /ui/ (docs/ui.md).

Options:
  --bind HOST:PORT   address to listen on (default 127.0.0.1:8088). Without an auth mode an
                     address other than loopback (127.0.0.0/8, ::1, localhost; 0.0.0.0 and ::
                     face the network) is refused (exit 2) unless --insecure-open is given. An
                     auth mode is --auth tokens, or a front door (--ui-identity-header with
                     --trust-identity-from or --trust-identity-secret-file). A host name is
                     resolved first: all its addresses must be loopback
  --auth tokens|none accounts and personal access tokens (docs/operations.md "Team setup"):
                     every request is checked against the route's permission and the caller's
                     role; "cairn admin user add NAME --admin --data DIR" makes the first
                     admin. Default none: every route is open to whoever reaches the listener
                     (loopback only), as without accounts. A front door is an auth mode too
  --insecure-open    listen on a network address without an auth mode: anyone who reaches it
                     may read and change every repository (a warning is logged at start). Only
                     for a network where every client is trusted
  --data DIR         data directory (default ./data; created on first start). The server holds
                     an exclusive lock on it while running.
  --new-seal-key     start although DATA/seal.key is missing and repositories hold webhook
                     secrets or drafts sealed with it (refused otherwise, exit 2): a new key is
                     made; those secrets and drafts stay unavailable (and kept) until the old
                     key is put back. Copy seal.key with backups and standbys instead
  --log-level LEVEL  pino log level: fatal, error, warn, info (default), debug, silent
  --log-format F     pretty (one readable line per event, an error's stack below it) or json
                     (one JSON object per line); default: pretty when stdout is a terminal,
                     json otherwise
  --lease-seconds N  worker-job lease length; a running job without a heartbeat for this long
                     is requeued (attempt counted) or failed (default 120)
  --max-attempts N   attempts per worker job before it fails for good (default 3)
  --ci-timeout-seconds N
                     timeout a runner applies to a CI command (default 1800)
  --no-ui            do not serve the reviewer UI (/ui/ and the redirect from /); the HTTP
                     interface is unchanged. The UI works only through that interface, so it
                     inherits its trust boundary: whoever reaches the listener can use either.
  --ui-identity-header NAME
                     take the caller's name from request header NAME (set by a trusted
                     ingress that authenticates people and strips the header from clients):
                     the UI shows it instead of asking, and every record a request writes
                     names that person (docs/operations.md "A front door")
  --trust-identity-from ADDR[,ADDR]
                     believe the identity header only from these peer addresses (the
                     ingress's); a request from any other address that sets it gets 403
  --trust-identity-secret-file FILE
                     believe the identity header only on requests that also carry the
                     secret in FILE (its first line) in X-Cairn-Ingress-Secret: needed when
                     the ingress shares a host with other processes (all dial from
                     127.0.0.1); others that set the header get 403
  --webhook-attempts N
                     attempts of a webhook delivery (one round) before it fails (default 8;
                     waits between them: 1 s, 2 s, 4 s, ...)
  --webhook-allow CIDR|HOST
                     open an internal webhook target (repeatable): a range (10.0.0.0/8,
                     fd00::/8), one address (10.1.2.3) or a host name (hooks.internal, whose
                     addresses are then not checked; the system resolver answers it, while
                     other names are asked of DNS as written, /etc/hosts unread). By default
                     webhooks reach only public addresses: loopback, link-local (cloud
                     metadata), private, CGNAT, unique-local, multicast and other
                     special-purpose addresses are refused at registration and at every
                     connection. The server's own listener is refused always
  --webhook-disable-after N
                     deliveries failed in a row that disable a webhook (default 4); the
                     owner re-enables it by registering its URL again with active: true
  --queue-depth N    land-queue entries tested at once, each on the tree it would land
                     (default 4)
  --queue-retries N  extra CI runs of a failed speculation on the same tree before the
                     entry is ejected (default 1; 0 ejects on the first failure)
  --queue-batch N    land-queue entries one CI run tests together (default 1); a failed
                     batch is tested again in halves
  --queue-stall-seconds N
                     a land-queue CI job without progress for this long is reported as
                     stalled (default 900)
  --event-retention N
                     keep the newest N events of each repository (trimmed at start and
                     every 10 minutes); a reader asking for older ones gets 410. Default:
                     keep every event
  --event-subscribers N
                     live event-feed subscribers at once, server-wide; more get 503 with
                     Retry-After (default 1000)
  --event-subscribers-per-client N
                     live event-feed subscribers one client address may hold (IPv6: one
                     /64); more get 429 with Retry-After (default 50). Behind a reverse
                     proxy every client shares the proxy's address: raise it there
  --event-heartbeat-ms N
                     an idle event stream gets a keepalive comment this often (default 15000)
  --allowed-host NAME
                     also answer requests whose Host header is NAME (a host name or IP
                     address, any port), e.g. the name an ingress forwards. Repeatable. By
                     default only the bound address at its port is answered (with localhost,
                     127.0.0.1 and [::1] when bound to loopback; any IP address when bound to
                     0.0.0.0 or ::); other names get 421 (DNS rebinding)
  --allowed-origin ORIGIN
                     also accept state-changing requests (POST, PUT, DELETE, ...) from pages of
                     ORIGIN (http[s]://HOST[:PORT]), e.g. https://cairn.example.com behind a TLS
                     ingress. Repeatable. By default only pages of this server's own origin may
                     write; others get 403
  --public-url URL   the address people reach this server at (the front door's, e.g.
                     https://cairn.example.com or https://example.com/cairn): links the
                     server prints, such as a push's remote: lines and the commit-msg hook
                     hint, start with it. By default they use the address the request came
                     to. An http(s) URL with an optional path; no credentials, query or
                     fragment
  --max-snapshot-paths N
                     paths a snapshot may hold: files, symlinks and directories, counted at
                     every place a shared tree appears (default 10000000). A commit that
                     would store a larger one is refused (413); one stored before is not
                     expanded (400). Computed from distinct trees, never by expanding them
  --git-mirror-allow CIDR|HOST
                     open an internal target for git mirrors (repeatable), as
                     --webhook-allow does for webhooks: by default a mirror pushes only to
                     public addresses, never to this server's own listener (docs/git.md
                     "Mirror")
  --git-mirror-file-root DIR
                     allow file:// mirrors of repositories under DIR (and nowhere else);
                     without it file:// URLs are refused, since they reach this machine's
                     disk (and run the hooks of the repository pushed to)
  --git-mirror-credential NAME[@INDEX,...][:HOST,...]=env:VAR|file:PATH
                     grant a secret to git mirrors under NAME (repeatable): the environment
                     variable VAR of this server, or the file PATH (one line: a token).
                     @INDEX,... limits it to those repositories, :HOST,... to those
                     remote hosts. It is sent over https only; a HOST written
                     http://HOST also allows plain http (the token in clear). A mirror names the grant ("credential": "NAME"); it
                     never names a variable or a file (docs/git.md "Mirror")
  --git-mirror-concurrency N
                     git mirror pushes at once, over all repositories (default 4)
  --git-mirror-per-repository N
                     git mirror pushes at once of one repository (default 2); a freed slot
                     goes to the next repository with a push waiting, in turn
  --git-mirror-stall-seconds N
                     stop a mirror's http(s) push, and record it failed, when nothing
                     arrives or leaves for N seconds (default 60)
  --git-places N     git requests (clone, fetch, push) served at once, over all
                     repositories (default 16); each runs git processes
  --git-places-per-client N
                     of them, held by one client at once: the caller's identity, else its
                     address (default 4)
  --git-places-per-repository N
                     of them, held by one repository at once (default 8)
  --git-queue-seconds N
                     a git request finding no place it may take waits up to N seconds for
                     one (default 10; 0: refused at once), then 503 with Retry-After
  --git-body-timeout-seconds N
                     a git request body that brings no byte for N seconds is cut off
                     (408, connection closed); also the window its rate is judged over,
                     and how long an answer the client stops reading may go without
                     draining before it is cut (default 30)
  --git-body-min-rate BYTES
                     bytes a second a git request body must bring on average over each
                     window (default 1024; 0: only the timeout)
  --shutdown-seconds N
                     on SIGTERM/SIGINT, exit within N seconds (default 10): in-flight requests
                     finish until two seconds before (then their connections are closed), the
                     commit queues drain; a second signal exits at once
  --archive s3://BUCKET[/PREFIX]
                     ship every repository continuously to this S3-compatible archive
                     (docs/operations.md "Archive"): new packs, then new log ranges, then
                     the other files, then one manifest per shipped commit point. Shipping
                     runs beside the commits: a slow or failing store never slows or fails
                     a commit; it retries and catches up. Credentials and endpoint come from
                     the AWS environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
                     AWS_REGION, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL) or --archive-config.
                     Any spelling of the URL names the same archive (s3://b/p is
                     s3://b/p/). A data directory a newer writer fenced stays fenced (its
                     archive.json says so) until cairn archive reclaim
  --archive-config FILE
                     JSON file of archive settings (region, endpoint, access_key_id,
                     secret_access_key, session_token, force_path_style, and the bounds of
                     every request: connect_timeout_ms, default 5000; timeout_ms, no byte
                     moved for this long fails a try, default 20000; max_attempts, default
                     3); its fields win over the environment. Secrets are never logged or
                     shown
  --archive-key-file FILE
                     encrypt every archive object (AES-256-GCM) with the first key of FILE:
                     lines KEYID:BASE64 of 32 random bytes, mode 600; the other keys still
                     read older objects (docs/operations.md "Encryption"). Needed by every
                     command that reads an encrypted archive (restore, archive verify,
                     archive prune, --follow)
  --archive-interval-ms N
                     ship what was committed this often (default 1000)
  --archive-lag-warn-seconds N
                     the oldest commit no stored manifest covers being older than N
                     seconds is logged as a warning and an archive.lagging event (default 60)
  --archive-concurrency N
                     objects uploaded to the archive at once, over every repository
                     (default 8)
  --archive-sync     answer a commit only once a manifest covering it is stored in the
                     archive (RPO 0; commits waiting together share one manifest)
  --archive-sync-timeout-seconds N
                     with --archive-sync: a commit not covered after N seconds is answered
                     503 (it is committed here, and shipped when the store answers;
                     default 30)
  --archive-keep POLICY
                     prune the archive by this retention policy (as cairn archive prune
                     --keep, e.g. all:48h,daily:30d) ten minutes after start and then every
                     --archive-prune-every (default 6h); without it the server never deletes
                     from the archive
  --archive-prune-grace DURATION
                     leave unreferenced objects younger than this (default 24h)
  --archive-prune-every DURATION
                     how often the server prunes with --archive-keep (default 6h)
  --archive-verify-every DURATION
                     every DURATION (e.g. 1h), restore one repository chosen at random, at
                     its newest manifest, into a temporary directory and check it as cairn
                     archive verify does; a failure is logged and an archive.verify_failed
                     event. Off without it
  --follow s3://BUCKET[/PREFIX]
                     be a read-only standby of the archive a writer ships to (--archive):
                     every repository is kept at the newest manifest (docs/operations.md
                     "Standby and failover"). Reads and event feeds serve; every other
                     request answers 503. cairn promote --server URL makes it the writer: it
                     claims the next archive generation (which fences the old writer) and
                     ships to the same archive. Settings as for --archive (--archive-config,
                     --archive-key-file;
                     --archive-interval-ms, --archive-concurrency, --archive-sync and
                     --archive-manifest-chain for the shipping after promotion). DATA may be
                     new or empty; --event-retention is ignored while following
  --follow-interval-ms N
                     look for new manifests this often (default 1000)
  --lease etcd://HOST:PORT/PREFIX | etcds://HOST:PORT/PREFIX | archive
                     with --archive: hold the writer lease in etcd (a TTL lease on the key
                     PREFIX/writer, kept alive) and acknowledge a write only while it is held:
                     otherwise, and once another writer took it, answer 503 naming the writer
                     (docs/operations.md "Writer lease (etcd)"). With --follow: a promotion
                     takes the lease first, once the old writer's expired.
                     archive: no etcd; a time-based fence in the archive itself
                     (writer-fence/): the writer checks it every third of the TTL, and a
                     promotion fences the writer and waits one TTL before it writes
                     (docs/operations.md "Writer lease (archive)"); no --failover auto
  --lease-ca-file FILE
                     etcds://: the CA certificates (PEM) to trust for etcd (default: the
                     system's)
  --lease-cert-file FILE, --lease-key-file FILE
                     etcds://: a client certificate and its key (PEM), for an etcd started
                     with --client-cert-auth
  --lease-user NAME, --lease-password-file FILE
                     etcd's own authentication (etcdctl auth enable): the user, and a file
                     (mode 600) whose first line is the password (never in the URL, never
                     logged; refused over plain etcd:// to another machine). These and the
                     three above serve --cluster's etcd too
  --cluster etcd://HOST:PORT/PREFIX
                     one node of several sharing etcd (docs/operations.md "Several nodes"):
                     it holds a membership there, new repositories get cluster-wide indexes
                     and are placed on the node that registered them, and a request for a
                     repository another node owns is passed to that node (streamed: pushes,
                     clones, event feeds); the repository list holds every node's.
                     etcds:// with the --lease-ca-file, --lease-cert-file/--lease-key-file and
                     --lease-user/--lease-password-file flags
  --node NAME        this node's name in the cluster (default: the host name): 1 to 63 of
                     a-z, 0-9, ".", "_", "-"
  --cluster-ttl N    the membership's TTL in seconds (default 10): a node that stops renewing
                     is down for the others after it
  --read-replicas all|I,J,...
                     with --cluster: keep read replicas of other nodes' repositories (every
                     one, or these indexes), each kept current from its owner's archive, and
                     serve their reads here (writes and git go to the owner; a read sent with
                     Cairn-Min-Commit: G is served here only once the replica holds commit G,
                     else by the owner)
  --lease-ttl N      the lease's TTL in seconds (default 10); the writer stops acknowledging
                     when its last confirmed keep-alive (or fence check) is older than the TTL
                     less a margin
  --failover auto|manual
                     with --follow and --lease: auto promotes this standby by itself once the
                     writer's lease expired (after it was seen held); manual (default) waits
                     for cairn promote. With --cluster and --archive: auto has the live nodes
                     take the repositories of a node that is down from its archive (each
                     taken by one of them) once it has been down --failover-after seconds;
                     manual (default) waits for cairn repo failover
  --failover-after N with --cluster and --failover auto: how long a node must be down before
                     its repositories are taken (default 30: a restart does not move them)
  --promote-secret-file FILE
                     with --follow: POST /archive/promote must carry the secret in FILE
                     (its first line: 16 or more printable ASCII characters, no
                     whitespace) as Authorization: Bearer
                     (cairn promote --secret-file FILE); 401 otherwise. Without it only a
                     caller on this machine may promote: a loopback --bind, a loopback
                     peer, no web page or proxy, and no --ui-identity-header (403 otherwise;
                     docs/operations.md "Who may promote"). With --archive it guards
                     POST /archive/handover the same way (cairn promote --switchover)
  -h, --help         show this help

Test-only options:
  --activation-delay-ms N  keep answering 503 "starting" for N ms after the data directory opened
  --lock-stale-ms N        data-directory lock staleness (default 10000; refreshed at half)
  --webhook-backoff-ms N   wait after a webhook delivery's first failed attempt (default 1000;
                           doubles after each further one)
  --git-mirror-backoff-ms N
                           wait after a git mirror's first failed push (default 1000; doubles
                           after each further one, up to 5 minutes)
  --archive-checkpoint-ranges N
                           ship a log's whole committed prefix again (a base) after N ranges
                           (default 256)
  --archive-lease-seconds N
                           the archive lease's length where the store honours conditional
                           writes (default 30)
  --archive-manifest-chain N
                           incremental manifests between two full ones (default 32; 0: every
                           manifest full)
`;

export interface ServerOptions {
  host: string;
  port: number;
  dataDir: string;
  log: Logger;
  /** The request log line's writer (see ./request-log.ts); by default log.info. */
  requestLog?: RequestLog;
  activationDelayMs?: number;
  jobPolicy?: JobPolicy;
  lockStaleMs?: number;
  /** The reviewer UI: on by default; false turns it off; `identityHeader` as --ui-identity-header. */
  ui?: false | { identityHeader?: string | null };
  /** The caller identity (lib/http/identity.ts); absent: the UI's identityHeader alone, believed from any peer. */
  identity?: IdentityOptions | null;
  /** Event feeds: retention, subscriber cap, heartbeat (--event-*). */
  events?: EventFeedOptions;
  /** Webhook delivery: attempts, backoff, timeout, disabling (lib/authority/webhook-dispatcher.ts). */
  webhooks?: Partial<WebhookPolicy>;
  /** Internal webhook targets opened (--webhook-allow; lib/domain/webhook-targets.ts). The listener is refused whatever this says. */
  webhookAllow?: string[];
  /** Test-only: how webhook host names are resolved (default webhookResolver(): DNS, or the system resolver for names opened). */
  webhookResolve?: Resolve;
  /** The land queue: depth, retries, batch, stall bound (--queue-*; docs/land-queue.md). */
  queue?: Partial<QueueOptions>;
  /** Extra Host names and page origins the request guard accepts (--allowed-host, --allowed-origin). */
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** The front door's address for the links the server prints (--public-url; lib/http/request-guard.ts canonicalPublicUrl). */
  publicUrl?: string | null;
  /** The stop's bound (--shutdown-seconds; default 10). */
  shutdownSeconds?: number;
  /** Paths a snapshot may hold (--max-snapshot-paths; lib/domain/tree-size.ts). */
  maxSnapshotPaths?: number;
  /** Where lines are served over git (lib/authority/git-shadow.ts); none by default (git serving answers 404). */
  gitShadows?: GitShadowSource;
  /** Git serving's places, queue and request-body pace (--git-places*, --git-queue-seconds, --git-body-*; lib/http/git-places.ts). */
  git?: Partial<GitLimits>;
  /** Export served lines' moves in the background (default true); tests that count what an export writes turn it off. */
  gitRefresh?: boolean;
  /** Git mirrors: internal targets opened, the file:// root, the credentials directory, backoff, concurrency (--git-mirror-*). */
  gitMirrors?: { allow?: string[]; fileRoot?: string | null; credentials?: string[]; backoffBaseMs?: number; concurrency?: number; timeoutMs?: number; stallSeconds?: number; perRepository?: number };
  /** Ship every repository to this archive (lib/authority/archiving.ts); none by default. */
  archive?: ArchivingOptions;
  /** Follow this archive read-only (lib/authority/follower.ts) until promoted; then ship to it. */
  /** `ship`: how the server ships once promoted (--archive-concurrency, --archive-sync, ...). */
  follow?: FollowOptions & { shipIntervalMs?: number; ship?: Pick<ArchivingOptions, 'concurrency' | 'manifestChain' | 'sync' | 'syncTimeoutMs'> };
  /** The secret POST /archive/promote must carry (--promote-secret-file); absent: only a caller on this machine may promote (lib/http/promote-access.ts). */
  promoteSecret?: string | null;
  /**
   * The writer lease in etcd (--lease, --lease-ttl; lib/authority/writer-lease.ts): with
   * --archive the server acknowledges writes only while it holds it; with --follow a promotion
   * takes it first (`failover: 'auto'`: at once when the writer's lease expires).
   */
  /** `location` 'archive': the lease is kept in the archive's own store (lib/lease/object-store-lease.ts). */
  lease?: { location: LeaseLocation | 'archive'; ttlSeconds: number; failover?: 'auto' | 'manual' } & EtcdAccess;
  /** serve --cluster: this node's membership and every repository's placement in etcd (lib/lease/etcd-cluster.ts). */
  cluster?: { location: LeaseLocation; node: string; ttlSeconds: number; failover?: 'auto' | 'manual'; failoverAfterMs?: number; openArchive?: (url: string) => Promise<ObjectStore & { close?: () => void }>; readReplicas?: 'all' | Set<number> } & EtcdAccess;
  /** Listen on a network address without an auth mode (--insecure-open); otherwise only loopback or behind a front door (./bind-policy.ts). */
  insecureOpen?: boolean;
  /** `tokens`: accounts and personal access tokens (--auth tokens); with a front door too, either names the caller. */
  auth?: 'tokens' | null;
  /** Start with a new DATA/seal.key although the data directory's repositories hold values sealed with a missing one (--new-seal-key). */
  newSealKey?: boolean;
  /** Test-only: how a bind host name is resolved (default: the system resolver). */
  bindLookup?: BindLookup;
}

export const DEFAULT_SHUTDOWN_SECONDS = 10;

/**
 * In-flight requests get the bound less two seconds (half of it when shorter): the rest is for
 * the commit queues to drain and the files to close (a checkpoint each, on a clean close).
 */
export function shutdownGraceMs(seconds: number): number {
  return seconds * 1000 - Math.min(2000, seconds * 500);
}

export interface RunningServer {
  url: string;
  /** Resolves once the ready app is active. */
  ready: Promise<CairnService>;
  /** Resolves with the exit code once the server has stopped. */
  done: Promise<number>;
  stop(): Promise<void>;
  /** The places git serving shares out (what they hold now: `snapshot()`). */
  gitPlaces: GitPlaces;
}

/** The refusal to start without DATA/seal.key when the repositories hold sealed values (serve --new-seal-key overrides); null when the start may go on. */
async function missingSealKeyRefusal(dataDir: string): Promise<CliUsageError | null> {
  const layout = new Layout(dataDir);
  if (existsSync(layout.sealKeyFile)) return null;
  const holding = await repositoriesHoldingSealed(layout.repositoriesDir);
  if (!holding.length) return null;
  return new CliUsageError(
    `${layout.sealKeyFile} is missing, but repositories (${holding.join(', ')}${holding.length >= 3 ? ', …' : ''}) hold webhook secrets or drafts sealed with it: ` +
      'copy the seal.key of the data directory they came from into place (docs/operations.md "Backups"), or pass --new-seal-key to start with a new key ' +
      '(their webhooks then need their secrets registered again and their drafts read as discarded; the sealed values are kept, should the old key come back).',
  );
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { log } = options;
  // The UI's files are read (and their hashed table built) before anything else starts, so a
  // broken install fails here with its reason instead of serving a page that cannot load.
  const ui: UiOptions | null = options.ui === false ? null : { assets: buildAssetTable(await loadUiSources()), identityHeader: options.ui?.identityHeader ?? null };
  // The identity header is the server's, not only the UI's: every request names its caller from it.
  const uiHeader = options.ui === false ? null : options.ui?.identityHeader ?? null;
  const identity: IdentityOptions | null = options.identity ?? (uiHeader ? { header: uiHeader } : null);
  // The one auth mode: a front door the identity header is believed from (by address or secret).
  // Without it a network address needs --insecure-open; refused before anything is created.
  const frontDoor = identity !== null && ((identity.trustFrom?.length ?? 0) > 0 || !!identity.secret);
  // An auth mode (accounts with tokens, a front door, or both) turns roles on for every route.
  const authMode: AuthMode | null = options.auth === 'tokens' ? (frontDoor ? 'tokens+ingress' : 'tokens') : frontDoor ? 'ingress' : null;
  const mayOpen = authMode !== null || options.insecureOpen === true;
  if (!mayOpen) {
    const network = await networkAddresses(options.host, options.bindLookup);
    if (network.length > 0) throw openRefusal(options.host, network);
  }
  // The operator's mirror credential grants, checked before anything starts.
  const credentials = credentialGrants(options.gitMirrors?.credentials ?? []);
  const gitPlaces = new GitPlaces(checkGitLimits({ ...DEFAULT_GIT_LIMITS, ...options.git }));
  const server = new PhasedServer();
  let stopping = false;
  let exitCode = 0;
  let finished!: (code: number) => void;
  const done = new Promise<number>((resolve) => { finished = resolve; });

  // A data directory this start creates is removed again if the server cannot listen.
  const created = !existsSync(options.dataDir);
  const lock = await lockDataDir(options.dataDir, {
    staleMs: options.lockStaleMs,
    onCompromised: (err) => {
      // The lock may now be held by someone else: stop taking requests before anything else is written.
      log.fatal({ problem: err.message }, 'data directory lock compromised; stopping');
      exitCode = 3;
      void stop();
    },
  });
  // A missing seal.key is never silently replaced while repositories hold values sealed with it.
  if (!options.newSealKey) {
    const refusal = await missingSealKeyRefusal(options.dataDir).catch(async (err: Error) => { await lock.release(); throw err; });
    if (refusal) {
      await lock.release();
      throw refusal;
    }
  }
  // Accounts, tokens and grants (DATA/access.log), read before the listener opens.
  let access: AccessGate | null = null;
  if (authMode !== null) {
    try {
      const notes: string[] = [];
      access = new AccessGate({ book: AccessBook.open(new Layout(options.dataDir), notes), mode: authMode });
      // A record cut at open was never acknowledged (a crash during its append): said, not hidden.
      for (const note of notes) log.warn({ note }, 'access.log recovery');
    } catch (err) {
      await lock.release();
      throw err;
    }
  }
  const shutdownSeconds = options.shutdownSeconds ?? DEFAULT_SHUTDOWN_SECONDS;
  let opening: Promise<CairnService> | null = null;
  let opened: CairnService | null = null;
  let archiving: Archiving | null = null;
  let following: Follower | null = null;
  let writerLease: WriterLease | null = null;
  let cluster: EtcdCluster | null = null;
  let clusterMoves: ClusterMoves | null = null;
  let readReplicas: ReadReplicas | null = null;
  // Ends the lease's waits (a writer's acquire, --failover auto) when the server stops.
  const leaseHalt = new AbortController();
  const stop = async (): Promise<void> => {
    if (stopping) return done.then(() => undefined);
    stopping = true;
    leaseHalt.abort();
    // Shipping stops first (after the object in flight): what is not shipped now ships after the
    // next start. A cluster node ships on until its requests ended and the archive holds every
    // commit: once it leaves, another node may fail its repositories over from that archive.
    await following?.stop().catch(() => {});
    if (!cluster) await archiving?.stop().catch(() => {});
    // The lease is not released by a stop: it expires after its TTL (a restart takes it again).
    await writerLease?.close().catch(() => {});
    log.info({ shutdown_seconds: shutdownSeconds }, 'stopping: finishing in-flight requests');
    // Event streams never finish by themselves: end them (clients resume with Last-Event-ID).
    opened?.feeds.close();
    const { forced } = await server.stop(shutdownGraceMs(shutdownSeconds));
    if (forced) log.warn({ connections: forced }, 'stopping: closed the connections still open when the grace period ended');
    if (cluster && archiving) {
      const why = await archiving.flushAll(Math.max(5_000, shutdownSeconds * 1000)).catch((err: Error) => err.message);
      if (why !== null) log.warn({ problem: why }, 'stopping: the archive did not take every commit before this node left the cluster; a failover of its repositories now would lack them');
      await archiving.stop().catch(() => {});
    }
    // Leaving the cluster revokes the membership: the other nodes say this one is down at once.
    await readReplicas?.stop().catch(() => {});
    await clusterMoves?.stop().catch(() => {});
    await cluster?.close().catch(() => {});
    // A start still opening the data directory is waited for, so what it opened is closed too.
    const service = opened ?? (await opening?.catch(() => null)) ?? null;
    // Every transaction queued so far is written before the lock goes (acknowledged writes
    // were durable before their answer; this finishes what was accepted).
    if (service) await service.shutdown();
    await access?.book.close();
    await lock.release();
    log.info({}, 'stopped');
    finished(exitCode);
  };

  let address;
  try {
    address = await server.listen(options.host, options.port);
  } catch (err) {
    await access?.book.close();
    await lock.release();
    if (created) await fsp.rm(options.dataDir, { recursive: true, force: true });
    throw new Error(`cannot listen on ${options.host}:${options.port}: ${(err as Error).message}`);
  }
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  if (!isLoopbackAddress(address.address)) {
    if (!mayOpen) {
      // The name resolved otherwise when listening (it changed since the check): close at once.
      await server.stop(0);
      await access?.book.close();
      await lock.release();
      if (created) await fsp.rm(options.dataDir, { recursive: true, force: true });
      throw openRefusal(options.host, [address.address]);
    }
    if (authMode === null) log.warn({ address: `${address.address}:${address.port}` }, insecureOpenWarning(url.slice('http://'.length)));
  }
  // Known only now (port 0 picks one): webhooks never send to the listener itself.
  const webhookNetwork = {
    targets: webhookTargets(options.webhookAllow ?? [], { address: address.address, port: address.port }),
    resolve: options.webhookResolve ?? DEFAULT_WEBHOOK_NETWORK.resolve,
  };
  // Host and origin rules (docs/operations.md "Cross-site requests and DNS rebinding"), for the port actually bound.
  const guard = new RequestGuard(options.host, address.port, { allowedHosts: options.allowedHosts, allowedOrigins: options.allowedOrigins });
  server.guard = guard;
  log.info({ address: `${address.address}:${address.port}`, data: options.dataDir }, 'listening');

  // With an auth mode new repositories get the team defaults (one approval from a non-author, CI
  // passing), and CODEOWNERS' @groups are the access book's groups.
  const book = access?.book ?? null;
  opening = CairnService.open({
    dataDir: options.dataDir, log, jobPolicy: options.jobPolicy, events: options.events, maxSnapshotPaths: options.maxSnapshotPaths, gitShadows: options.gitShadows,
    ...(book ? { defaultRules: TEAM_DEFAULT_RULES, groupMembers: (group: string) => book.groupMembers(group) } : {}),
  });
  /**
   * --failover auto: once the writer's lease was seen held and then gone (expired, or released),
   * promote; a failed promotion is tried again while the lease stays free.
   */
  const failOver = async (service: CairnService, follower: Follower): Promise<void> => {
    const l = options.lease!;
    if (l.location === 'archive') return; // refused as a usage error: the archive's writer writes no heartbeat
    const probe = new EtcdWriterLease(l.location, { ttlSeconds: l.ttlSeconds, ...(l.tls ? { tls: l.tls } : {}), ...(l.auth ? { auth: l.auth } : {}) });
    const every = Math.max(200, (l.ttlSeconds * 1000) / 3);
    let seen = false;
    try {
      while (!leaseHalt.signal.aborted && service.promote) {
        const holder = await probe.holder().catch(() => undefined);
        if (holder) seen = true;
        if (holder === null && seen) {
          log.warn({ lease: l.location.url, follow: follower.url }, 'failover: the writer lease is free; promoting this standby');
          try {
            await service.promote(leaseHalt.signal);
            log.info({ lease: l.location.url }, 'failover: promoted');
            return;
          } catch (err) {
            log.error({ problem: (err as Error).message }, 'failover: promotion failed; trying again');
          }
        }
        await sleep(every, undefined, { signal: leaseHalt.signal, ref: false }).catch(() => {});
      }
    } finally {
      await probe.close().catch(() => {});
    }
  };

  const ready = (async () => {
    const service = await opening;
    opened = service;
    if (options.activationDelayMs) await sleep(options.activationDelayMs);
    if (!stopping) {
      // Everything that writes by itself (maintenance, webhooks, the land queue, git mirrors)
      // waits while the server follows an archive: a follower's files change only by its manifests.
      const startWriters = (): void => {
        service.startMaintenance();
        service.startWebhooks({ ...DEFAULT_WEBHOOK_POLICY, ...options.webhooks }, webhookNetwork);
        service.startLandQueues(checkQueueOptions({ ...DEFAULT_QUEUE_OPTIONS, ...options.queue }));
        if (options.gitRefresh !== false) service.startGitRefresh();
        const m = options.gitMirrors ?? {};
        service.startGitMirrors({
          ...DEFAULT_MIRROR_POLICY,
          targets: { network: webhookTargets(m.allow ?? [], { address: address.address, port: address.port }), fileRoot: m.fileRoot ?? null },
          credentials,
          ...(m.backoffBaseMs ? { backoffBaseMs: m.backoffBaseMs } : {}),
          ...(m.concurrency ? { concurrency: m.concurrency } : {}),
          ...(m.timeoutMs ? { timeoutMs: m.timeoutMs } : {}),
          ...(m.stallSeconds ? { stallSeconds: m.stallSeconds } : {}),
          ...(m.perRepository ? { perRepository: m.perRepository } : {}),
        });
      };
      const startArchiving = (a: ArchivingOptions): void => {
        const wl = writerLease;
        // With --lease a handover ends by releasing the lease, so the standby takes it at once (not after the TTL).
        archiving = new Archiving(service, wl ? { ...a, gate: (index, generation) => wl.acknowledge(index, generation), releaseLease: () => wl.release() } : a);
        const shipping = archiving;
        service.archiveStatus = () => shipping.status();
        service.handover = (request) => shipping.handover(request);
      };
      // serve --lease: one WriterLease per try at the lease (a failed promotion gives its lease back).
      const newWriterLease = (): WriterLease => {
        const l = options.lease!;
        let wl: WriterLease | null = null;
        const common = {
          ttlSeconds: l.ttlSeconds,
          publicUrl: options.publicUrl ?? url,
          onSuperseded: (by: WriterRecord | null) => wl?.superseded(by),
          onEvent: (what: string, detail: string) => (what === 'regained' ? log.info : log.warn).call(log, { lease: leaseName(l), problem: detail }, `lease: ${what}`),
        };
        const f = options.follow;
        const backend: LeaseBackend = l.location !== 'archive'
          ? new EtcdWriterLease(l.location, { ...common, ...(l.tls ? { tls: l.tls } : {}), ...(l.auth ? { auth: l.auth } : {}) })
          : new ArchiveWriterLease(f ? f.store : options.archive!.store, {
            ...common,
            archiveUrl: canonicalArchiveUrl(f ? f.url : options.archive!.url),
            standby: !!f,
            generation: () => archiving?.status().generation ?? null,
          });
        wl = new WriterLease({
          lease: backend,
          log,
          idHighs: (index) => service.idHighs(index),
          applyFloors: (floors) => service.setIdFloors(floors),
          onSuperseded: (by, why) => {
            const shipping = archiving;
            if (shipping) void shipping.fenceByLease(by?.generation ?? null, why).catch((err: Error) => log.error({ problem: err.message }, 'lease: could not record the fence in archive.json'));
          },
        });
        service.leaseStatus = () => wl!.status();
        service.writerLease = wl;
        return wl;
      };
      if (options.follow) {
        const f = options.follow;
        // A fenced directory's history is no longer the archive's: following it, then a promotion, would write again.
        const fenced = await fencedRefusal(service.layout.archiveFile, options.dataDir);
        if (fenced !== null) throw new Error(fenced);
        const follower = new Follower(service, f);
        following = follower;
        service.readOnly = `read-only follower of ${follower.url}: writes go to the archive's writer; promote this server (cairn promote --server URL) to write here`;
        service.followStatus = () => follower.status();
        service.promote = async (signal, expect) => {
          // With --lease the lease comes first: the old writer stops acknowledging before anything is claimed.
          const wl = options.lease ? (writerLease ??= newWriterLease()) : null;
          let promotion;
          try {
            if (wl) await wl.acquire(signal);
            promotion = await follower.promote(signal, expect);
          } catch (err) {
            if (wl) {
              // Not promoted: give the lease back at once, for this server's next try or another's.
              writerLease = null;
              service.writerLease = null;
              service.leaseStatus = null;
              await wl.release().catch(() => {});
              await wl.close().catch(() => {});
              // --lease archive: the fence written before the promotion stays (it is written once).
              const fenced = wl.o.lease instanceof ArchiveWriterLease ? wl.o.lease.fencedGeneration() : null;
              if (fenced !== null && err instanceof Error) err.message = `${err.message}; the writer of archive generation ${fenced} was fenced (writer-fence/) before and stays stopped: promote again, or reclaim its directory (cairn archive reclaim)`;
            }
            throw err;
          }
          if (wl) {
            service.writeRefusal = () => wl.requestRefusal();
            void wl.o.lease.setGeneration(promotion.generation).catch(() => {});
          }
          // The accounts, tokens and grants the follower wrote from the archive hold from now on.
          const notes: string[] = [];
          await access?.book.reload(notes);
          for (const note of notes) log.warn({ note }, 'access.log recovery');
          service.readOnly = null;
          service.promote = null;
          startWriters();
          // The promoted server ships to the archive it followed, under the generation it claimed.
          startArchiving({ ...(options.archive ?? {}), ...(f.ship ?? {}), url: f.url, store: f.store, intervalMs: f.shipIntervalMs ?? options.archive?.intervalMs });
          return promotion;
        };
        follower.start();
        if (options.lease?.failover === 'auto') void failOver(service, follower);
      } else {
        // A directory that handed its archive over writes nothing at any start, with or without
        // --archive, until cairn archive reclaim (docs/operations.md "Planned switchover"); it
        // takes no lease either (its handover released it, or the lease's TTL ends it).
        const handedOver = (await readArchiveFile(service.layout.archiveFile))?.handed_over;
        if (handedOver) {
          service.readOnly = `${handedOverRefusal(handedOver)} (recorded in archive.json; cairn archive reclaim --data DIR makes it write again)`;
          log.warn({ successor: handedOver.successor, at: handedOver.handed_over_at }, 'this data directory handed its archive over: it serves reads only');
        } else {
          if (options.lease) {
            const wl = (writerLease = newWriterLease());
            service.writeRefusal = () => wl.requestRefusal();
            // A directory fenced before takes no lease: its history is no longer the archive's.
            const fenced = await fencedRefusal(service.layout.archiveFile, options.dataDir);
            if (fenced !== null) wl.stopAcknowledging(fenced);
            else {
              // The generation this directory writes under is named before the lease is taken: the
              // archive's lease checks that nobody fenced it.
              void (async () => {
                const local = await readArchiveFile(service.layout.archiveFile).catch(() => null);
                if (local && local.generation !== '0') await wl.o.lease.setGeneration(local.generation).catch(() => {});
                await wl.acquire(leaseHalt.signal);
                if (local && local.generation !== '0') await wl.o.lease.setGeneration(local.generation);
              })().catch((err: Error) => { if (!stopping) log.error({ lease: leaseName(options.lease!), problem: err.message }, 'lease: not taken'); });
            }
          }
          startWriters();
        }
      }
      // Who may promote: the listener actually bound (a wildcard faces the network), a front door, the secret.
      const promotion: PromoteAccess = { secret: options.promoteSecret ?? null, loopbackListener: isLoopbackAddress(address.address), frontDoor: identity !== null };
      // serve --cluster: join before answering, so that every request is routed by the placements.
      if (options.cluster && !stopping) {
        const c = options.cluster;
        const member = new EtcdCluster(c.location, { node: c.node, url: options.publicUrl ?? url, ttlSeconds: c.ttlSeconds, failover: c.failover ?? 'manual', ...(c.tls ? { tls: c.tls } : {}), ...(c.auth ? { auth: c.auth } : {}) });
        cluster = member;
        await member.join(c.ttlSeconds * 1000 + 5000);
        // Moves and failovers go through the archives: this node's is recorded for the others.
        const moves = new ClusterMoves(service, {
          cluster: member,
          archive: options.archive ? {
            url: canonicalArchiveUrl(options.archive.url),
            flush: (index, timeoutMs) => {
              if (!archiving) throw new Busy('the archive shipping has not started yet; retry');
              return archiving.flushRepository(index, timeoutMs);
            },
            forget: (index) => archiving?.forgetRepository(index),
            arrived: (index) => archiving?.arrivedRepository(index),
          } : null,
          openArchive: c.openArchive ?? (() => Promise.reject(new Conflict('this node cannot open another node\'s archive'))),
          failover: c.failover ?? 'manual',
          ...(c.failoverAfterMs !== undefined ? { failoverAfterMs: c.failoverAfterMs } : {}),
        });
        try {
          await member.publishArchive(options.archive ? canonicalArchiveUrl(options.archive.url) : null);
          // What left this node while it was away is set aside; a directory's other live
          // repositories must be the ones the cluster places here (a former single server's
          // would collide with the cluster's indexes).
          // Read replicas first: the start's check of this directory's repositories knows them.
          if (c.readReplicas) {
            const replicas = new ReadReplicas(service, { cluster: member, openArchive: c.openArchive ?? (() => Promise.reject(new Error('no archive access'))), select: c.readReplicas });
            await replicas.start();
            readReplicas = replicas;
          }
          await moves.start();
        } catch (err) {
          await readReplicas?.stop();
          await moves.stop();
          await member.close().catch(() => {});
          cluster = null;
          throw err;
        }
        clusterMoves = moves;
        service.cluster = member;
        service.moves = moves;
        service.setClusterGate(moves);
        log.info({ cluster: c.location.url, node: c.node, url: options.publicUrl ?? url }, 'cluster: joined');
      }
      server.activate(createApp({ service, log, requestLog: options.requestLog, assets: swaggerUiAssets(), ui, guard, identity, promotion, gitPlaces, access, publicUrl: options.publicUrl ?? null }).callback());
      if (options.archive && !options.follow) startArchiving(options.archive);
      log.info({ repositories: service.registry.all().length }, 'ready');
      // Repositories open on first use; this opens the rest so their timers and dispatchers run.
      void service.openAllInBackground();
    }
    return service;
  })();
  ready.catch((err) => {
    log.fatal({ problem: (err as Error).message }, 'cannot open the data directory');
    exitCode = 5;
    void stop();
  });
  return { url, ready, done, stop, gitPlaces };
}

/** The lease's location for logs: its etcd URL, or `archive`. */
const leaseName = (l: { location: LeaseLocation | 'archive' }): string => (l.location === 'archive' ? 'archive' : l.location.url);

/** Git serving's limits as given, or an error naming the one that is not a whole number in range. */
export function checkGitLimits(l: GitLimits): GitLimits {
  const whole = (v: number, min: number) => Number.isSafeInteger(v) && v >= min;
  if (!whole(l.places, 1)) throw new Error('git places must be a whole number of at least 1');
  if (!whole(l.perClient, 1) || !whole(l.perRepository, 1)) throw new Error('git places per client and per repository must be whole numbers of at least 1');
  if (!whole(l.queueMs, 0) || !whole(l.bodyTimeoutMs, 1) || !whole(l.minBytesPerSecond, 0)) throw new Error('git queue wait, body timeout and minimum body rate must be whole numbers');
  return { ...l, perClient: Math.min(l.perClient, l.places), perRepository: Math.min(l.perRepository, l.places) };
}

/**
 * A secret file's first line, trimmed: 16 characters or more. Its text is never in a message.
 * `bearer`: it is sent as `Authorization: Bearer <secret>` (the promotion secret), where
 * whitespace ends the token and a byte outside ASCII does not survive a header, so such a
 * secret could never match: refused. (The ingress secret goes in a header value of its own,
 * where inner spaces survive; the ingress, not cairn, sends it.)
 */
async function readSecretFile(flag: string, file: string, bearer = false): Promise<string> {
  let secret: string;
  try {
    secret = (await fsp.readFile(file, 'utf8')).split(/\r?\n/)[0]!.trim();
  } catch (err) {
    throw new CliUsageError(`${flag}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (secret.length < 16) throw new CliUsageError(`${flag}: the secret must be at least 16 characters`);
  if (bearer && !/^[\x21-\x7e]+$/.test(secret)) throw new CliUsageError(`${flag}: the secret must be printable ASCII without whitespace (it is sent as Authorization: Bearer SECRET); make one with: head -c 32 /dev/urandom | base64`);
  return secret;
}

/**
 * --lease-ca-file, --lease-cert-file/--lease-key-file and --lease-user with --lease-password-file
 * (etcd's own auth), for every etcd the server reaches (the lease's and the cluster's): read now,
 * so a missing file is a usage error. TLS goes to the etcds:// ones; the user to all of them, and
 * never in clear over etcd:// to another machine. None of their contents is ever in a message or
 * a log. Resolves what each location gets.
 */
async function etcdAccess(values: Record<string, unknown>, locations: LeaseLocation[]): Promise<(location: LeaseLocation) => EtcdAccess> {
  const given = (flag: string) => values[flag] !== undefined;
  const tlsFlags = ['lease-ca-file', 'lease-cert-file', 'lease-key-file'].filter(given);
  const authFlags = ['lease-user', 'lease-password-file'].filter(given);
  const any = [...tlsFlags, ...authFlags];
  if (any.length && locations.length === 0) throw new CliUsageError(`--${any[0]} is for etcd (--lease etcd://… or etcds://…, --cluster etcd://…), not --lease archive`);
  if (tlsFlags.length && !locations.some((l) => l.tls)) throw new CliUsageError(`--${tlsFlags[0]} needs an etcds:// URL (TLS) for --lease or --cluster`);
  if (given('lease-cert-file') !== given('lease-key-file')) throw new CliUsageError('--lease-cert-file and --lease-key-file go together (a client certificate and its key)');
  if (authFlags.length === 1) throw new CliUsageError('--lease-user and --lease-password-file go together');
  const clear = locations.find((l) => !l.tls && !isLoopbackAddress(l.host) && l.host !== 'localhost');
  if (authFlags.length === 2 && clear) throw new CliUsageError(`--lease-user over ${clear.url} would send the password in clear to another machine: use etcds:// (TLS), or an etcd on this machine`);
  const read = async (flag: string): Promise<Buffer | null> => {
    if (!given(flag)) return null;
    try {
      return await fsp.readFile(String(values[flag]));
    } catch (err) {
      throw new CliUsageError(`--${flag}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const tls = tlsFlags.length || locations.some((l) => l.tls) ? { ca: await read('lease-ca-file'), cert: await read('lease-cert-file'), key: await read('lease-key-file') } : null;
  let auth: EtcdAccess['auth'] | null = null;
  if (authFlags.length === 2) {
    const user = String(values['lease-user']);
    if (!/^[\x21-\x7e]{1,128}$/.test(user)) throw new CliUsageError('--lease-user must be 1 to 128 printable ASCII characters without spaces');
    const file = String(values['lease-password-file']);
    const mode = (await fsp.stat(file).catch(() => null))?.mode ?? 0;
    if ((mode & 0o077) !== 0) throw new CliUsageError(`--lease-password-file: ${file} is readable or writable by group or others (mode ${(mode & 0o777).toString(8)}): chmod 600 ${file}`);
    const password = (await read('lease-password-file'))!.toString('utf8').split(/\r?\n/)[0]!;
    if (password === '') throw new CliUsageError('--lease-password-file: its first line (the password) is empty');
    auth = { username: user, password };
  }
  return (location) => ({ ...(location.tls && tls ? { tls } : {}), ...(auth ? { auth } : {}) });
}

export async function serve(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    bind: { type: 'string', default: '127.0.0.1:8088' },
    data: { type: 'string', default: './data' },
    'log-level': { type: 'string', default: 'info' },
    'log-format': { type: 'string' },
    'activation-delay-ms': { type: 'string', default: '0' },
    'lock-stale-ms': { type: 'string', default: '10000' },
    'lease-seconds': { type: 'string', default: String(DEFAULT_JOB_POLICY.leaseSeconds) },
    'max-attempts': { type: 'string', default: String(DEFAULT_JOB_POLICY.maxAttempts) },
    'ci-timeout-seconds': { type: 'string', default: String(DEFAULT_JOB_POLICY.timeoutSeconds) },
    'no-ui': { type: 'boolean', default: false },
    'ui-identity-header': { type: 'string' },
    'trust-identity-from': { type: 'string' },
    'trust-identity-secret-file': { type: 'string' },
    'event-retention': { type: 'string' },
    'event-subscribers': { type: 'string', default: String(DEFAULT_EVENT_FEED_OPTIONS.maxSubscribers) },
    'event-subscribers-per-client': { type: 'string', default: String(DEFAULT_EVENT_FEED_OPTIONS.maxSubscribersPerClient) },
    'event-heartbeat-ms': { type: 'string', default: String(DEFAULT_EVENT_FEED_OPTIONS.heartbeatMs) },
    'webhook-attempts': { type: 'string', default: String(DEFAULT_WEBHOOK_POLICY.maxAttempts) },
    'webhook-backoff-ms': { type: 'string', default: String(DEFAULT_WEBHOOK_POLICY.backoffBaseMs) },
    'webhook-allow': { type: 'string', multiple: true, default: [] },
    'webhook-disable-after': { type: 'string', default: String(DEFAULT_WEBHOOK_POLICY.disableAfter) },
    'queue-depth': { type: 'string', default: String(DEFAULT_QUEUE_OPTIONS.depth) },
    'queue-retries': { type: 'string', default: String(DEFAULT_QUEUE_OPTIONS.retries) },
    'queue-batch': { type: 'string', default: String(DEFAULT_QUEUE_OPTIONS.batch) },
    'queue-stall-seconds': { type: 'string', default: String(DEFAULT_QUEUE_OPTIONS.stall_s) },
    'allowed-host': { type: 'string', multiple: true, default: [] },
    'allowed-origin': { type: 'string', multiple: true, default: [] },
    'public-url': { type: 'string' },
    'shutdown-seconds': { type: 'string', default: String(DEFAULT_SHUTDOWN_SECONDS) },
    'max-snapshot-paths': { type: 'string', default: String(DEFAULT_MAX_SNAPSHOT_PATHS) },
    'git-mirror-allow': { type: 'string', multiple: true, default: [] },
    'git-mirror-file-root': { type: 'string' },
    'git-credentials-dir': { type: 'string' },
    'git-mirror-credential': { type: 'string', multiple: true, default: [] },
    'git-mirror-concurrency': { type: 'string', default: String(DEFAULT_MIRROR_POLICY.concurrency) },
    'git-mirror-per-repository': { type: 'string', default: String(DEFAULT_MIRROR_POLICY.perRepository) },
    'git-mirror-stall-seconds': { type: 'string', default: String(DEFAULT_MIRROR_POLICY.stallSeconds) },
    'git-mirror-backoff-ms': { type: 'string', default: String(DEFAULT_MIRROR_POLICY.backoffBaseMs) },
    'git-places': { type: 'string', default: String(DEFAULT_GIT_LIMITS.places) },
    'git-places-per-client': { type: 'string', default: String(DEFAULT_GIT_LIMITS.perClient) },
    'git-places-per-repository': { type: 'string', default: String(DEFAULT_GIT_LIMITS.perRepository) },
    'git-queue-seconds': { type: 'string', default: String(DEFAULT_GIT_LIMITS.queueMs / 1000) },
    'git-body-timeout-seconds': { type: 'string', default: String(DEFAULT_GIT_LIMITS.bodyTimeoutMs / 1000) },
    'git-body-min-rate': { type: 'string', default: String(DEFAULT_GIT_LIMITS.minBytesPerSecond) },
    archive: { type: 'string' },
    follow: { type: 'string' },
    'follow-interval-ms': { type: 'string', default: '1000' },
    lease: { type: 'string' },
    'lease-ttl': { type: 'string', default: '10' },
    'lease-ca-file': { type: 'string' },
    'lease-cert-file': { type: 'string' },
    'lease-key-file': { type: 'string' },
    'lease-user': { type: 'string' },
    'lease-password-file': { type: 'string' },
    cluster: { type: 'string' },
    'read-replicas': { type: 'string' },
    'failover-after': { type: 'string', default: '30' },
    node: { type: 'string' },
    'cluster-ttl': { type: 'string', default: '10' },
    failover: { type: 'string', default: 'manual' },
    'promote-secret-file': { type: 'string' },
    'insecure-open': { type: 'boolean', default: false },
    auth: { type: 'string' },
    'new-seal-key': { type: 'boolean', default: false },
    'archive-config': { type: 'string' },
    'archive-key-file': { type: 'string' },
    'archive-interval-ms': { type: 'string', default: '1000' },
    'archive-lag-warn-seconds': { type: 'string', default: '60' },
    'archive-keep': { type: 'string' },
    'archive-prune-grace': { type: 'string', default: DEFAULT_GRACE },
    'archive-prune-every': { type: 'string', default: '6h' },
    'archive-verify-every': { type: 'string' },
    'archive-checkpoint-ranges': { type: 'string', default: '256' },
    'archive-lease-seconds': { type: 'string', default: '30' },
    'archive-concurrency': { type: 'string', default: '8' },
    'archive-sync': { type: 'boolean', default: false },
    'archive-sync-timeout-seconds': { type: 'string', default: '30' },
    'archive-manifest-chain': { type: 'string', default: '32' },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    process.stdout.write(SERVE_HELP);
    return 0;
  }
  const { host, port } = parseBind(String(values.bind));
  const activationDelayMs = Number(values['activation-delay-ms']);
  if (!Number.isInteger(activationDelayMs) || activationDelayMs < 0) throw new CliUsageError('--activation-delay-ms must be a non-negative integer');
  const positive = (flag: string, max: number): number => {
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new CliUsageError(`--${flag} must be an integer from 1 to ${max}`);
    return n;
  };
  const jobPolicy: JobPolicy = {
    leaseSeconds: positive('lease-seconds', 86400),
    maxAttempts: positive('max-attempts', 1000),
    timeoutSeconds: positive('ci-timeout-seconds', 7 * 86400),
  };
  // JSON log lines are gathered (up to ~16 KB, see ./log-batch.ts) and written asynchronously, in
  // order: one write(2) per ~80 request lines instead of one each. A timer hands on what waits
  // every 200 ms, and on exit everything is written synchronously. The request line is formatted
  // by ./request-log.ts (pino's bytes, built faster). Every line keeps every field. On a TTY they
  // are pretty-printed (pino-pretty, see ./log-format.ts).
  const format = values['log-format'] ?? (process.stdout.isTTY ? 'pretty' : 'json');
  if (format !== 'pretty' && format !== 'json') throw new CliUsageError('--log-format must be pretty or json');
  const logOptions = { level: String(values['log-level']), base: { service: 'cairn' } };
  let log: Logger;
  let requestLog: RequestLog | undefined;
  if (format === 'pretty') log = pino(logOptions, prettyStream(process.stdout));
  else {
    const batch = new LogLineBatch(sinkOnFd(pino.destination({ dest: 1, sync: false }), 1), 16_000);
    const flusher = setInterval(() => batch.flush(), 200);
    flusher.unref();
    process.on('exit', () => {
      try { batch.flushSync(); } catch { /* stdout already gone */ }
    });
    log = pino(logOptions, batch);
    requestLog = jsonRequestLog({ level: logOptions.level, base: logOptions.base, sink: batch });
  }
  const identityHeader = values['ui-identity-header'] === undefined ? undefined : String(values['ui-identity-header']);
  if (identityHeader !== undefined && !HEADER_NAME.test(identityHeader)) throw new CliUsageError('--ui-identity-header must be a header name (letters, digits and !#$%&\'*+.^_`|~-)');
  const ui = values['no-ui'] ? false as const : { identityHeader: identityHeader ?? null };
  let trustFrom: string[] | null = null;
  if (values['trust-identity-from'] !== undefined) {
    try {
      trustFrom = parseTrustList(String(values['trust-identity-from']));
    } catch (err) {
      throw new CliUsageError(`--trust-identity-from: ${(err as Error).message}`);
    }
  }
  const secret = values['trust-identity-secret-file'] === undefined ? null : await readSecretFile('--trust-identity-secret-file', String(values['trust-identity-secret-file']));
  if ((trustFrom || secret) && identityHeader === undefined) throw new CliUsageError('--trust-identity-from and --trust-identity-secret-file need --ui-identity-header');
  const identity: IdentityOptions | null = identityHeader === undefined ? null : { header: identityHeader, trustFrom, secret };
  const authFlag = values.auth === undefined ? 'none' : String(values.auth);
  if (authFlag !== 'tokens' && authFlag !== 'none') throw new CliUsageError('--auth must be tokens or none');
  const auth = authFlag === 'tokens' ? 'tokens' as const : null;
  const lockStaleMs = Number(values['lock-stale-ms']);
  if (!Number.isInteger(lockStaleMs) || lockStaleMs < 2000) throw new CliUsageError('--lock-stale-ms must be an integer ≥ 2000');
  const events: EventFeedOptions = {
    retention: values['event-retention'] === undefined ? null : positive('event-retention', Number.MAX_SAFE_INTEGER),
    maxSubscribers: positive('event-subscribers', 1_000_000),
    maxSubscribersPerClient: positive('event-subscribers-per-client', 1_000_000),
    heartbeatMs: positive('event-heartbeat-ms', 3_600_000),
  };
  const webhooks = { maxAttempts: positive('webhook-attempts', 100), backoffBaseMs: positive('webhook-backoff-ms', 3_600_000), disableAfter: positive('webhook-disable-after', 1000) };
  const webhookAllow = (values['webhook-allow'] ?? []) as string[];
  try {
    webhookTargets(webhookAllow, null);
  } catch (err) {
    if (isCairnError(err)) throw new CliUsageError(err.message);
    throw err;
  }
  const mirrorAllow = (values['git-mirror-allow'] ?? []) as string[];
  try {
    webhookTargets(mirrorAllow, null);
  } catch (err) {
    if (isCairnError(err)) throw new CliUsageError(err.message.replace('--webhook-allow', '--git-mirror-allow'));
    throw err;
  }
  const dirFlag = (flag: string): string | null => {
    const v = values[flag];
    if (v === undefined) return null;
    const dir = path.resolve(String(v));
    if (!existsSync(dir)) throw new CliUsageError(`--${flag} ${String(v)}: no such directory`);
    return dir;
  };
  if (values['git-credentials-dir'] !== undefined) throw new CliUsageError('--git-credentials-dir is replaced by grants: --git-mirror-credential NAME=file:PATH for each token file (a mirror then names the grant: "credential": "NAME")');
  // A grant's relative file:PATH is the working directory's, as other paths on the command line.
  const grantTexts = ((values['git-mirror-credential'] ?? []) as string[]).map((t) => t.replace(/^([^=]*=file:)(?!\/)(.+)$/s, (_m, head: string, p: string) => `${head}${path.resolve(p)}`));
  try {
    credentialGrants(grantTexts);
  } catch (err) {
    if (isCairnError(err)) throw new CliUsageError(`--git-mirror-credential: ${err.message}`);
    throw err;
  }
  const gitMirrors = {
    allow: mirrorAllow,
    fileRoot: dirFlag('git-mirror-file-root'),
    credentials: grantTexts,
    concurrency: positive('git-mirror-concurrency', 64),
    perRepository: positive('git-mirror-per-repository', 64),
    stallSeconds: positive('git-mirror-stall-seconds', 3600),
    backoffBaseMs: positive('git-mirror-backoff-ms', 3_600_000),
  };
  const retries = Number(values['queue-retries']);
  if (!Number.isInteger(retries) || retries < 0 || retries > 10) throw new CliUsageError('--queue-retries must be an integer from 0 to 10');
  const queue: QueueOptions = { depth: positive('queue-depth', 64), retries, batch: positive('queue-batch', 64), stall_s: positive('queue-stall-seconds', 86_400) };
  const allowedHosts = values['allowed-host'] as string[];
  for (const h of allowedHosts) if (canonicalHost(h) === null) throw new CliUsageError(`--allowed-host must be a host name or IP address (no port), got "${h}"`);
  const allowedOrigins = values['allowed-origin'] as string[];
  for (const o of allowedOrigins) if (canonicalOrigin(o) === null) throw new CliUsageError(`--allowed-origin must be an origin such as https://cairn.example.com or http://HOST:PORT, got "${o}"`);
  let publicUrl: string | null = null;
  if (values['public-url'] !== undefined) {
    publicUrl = canonicalPublicUrl(String(values['public-url']));
    if (publicUrl === null) throw new CliUsageError(`--public-url must be an http or https URL such as https://cairn.example.com or https://example.com/cairn (no credentials, query or fragment), got "${String(values['public-url']).slice(0, 200)}"`);
  }
  const shutdownSeconds = positive('shutdown-seconds', 3600);
  const maxSnapshotPaths = parseMaxSnapshotPaths(values['max-snapshot-paths']);
  // --archive and --follow take the same connection settings (the AWS_* environment or --archive-config).
  // --archive-key-file seals every object (lib/archive/encryption.ts); a key file that does not
  // fit the archive (none for an encrypted one, one for a plain one, the wrong key id) is refused
  // at start, read from the archive's id object, rather than retried for ever.
  const openArchiveStore = async (flag: string, url: string) => {
    let store;
    try {
      const inner = await openS3Store(url, process.env, values['archive-config'] === undefined ? undefined : String(values['archive-config']));
      store = await archiveStore(inner, values['archive-key-file'] === undefined ? undefined : String(values['archive-key-file']));
    } catch (err) {
      throw new CliUsageError(`${flag}: ${(err as Error).message}`);
    }
    try {
      await readArchiveId(store);
    } catch (err) {
      if (err instanceof ObjectStoreError && err.kind === 'config') { store.close(); throw new CliUsageError(`${flag}: ${err.message}`); }
      // Unreachable or damaged: the shipper or follower retries and reports.
    }
    return store;
  };
  // How the server ships, with --archive or once promoted from --follow.
  const shipping = (): Pick<ArchivingOptions, 'concurrency' | 'manifestChain' | 'sync' | 'syncTimeoutMs'> => {
    const chain = Number(values['archive-manifest-chain']);
    if (!Number.isInteger(chain) || chain < 0 || chain > 1024) throw new CliUsageError('--archive-manifest-chain must be an integer from 0 to 1024');
    return {
      concurrency: positive('archive-concurrency', 256),
      manifestChain: chain,
      sync: values['archive-sync'] === true,
      syncTimeoutMs: positive('archive-sync-timeout-seconds', 86_400) * 1000,
    };
  };
  // --lease: checked before anything is opened; etcd itself is reached only once the server runs.
  let lease: ServerOptions['lease'];
  if (values.lease !== undefined) {
    if (values.archive === undefined && values.follow === undefined) throw new CliUsageError('--lease needs --archive (the writer) or --follow (a standby): the lease guards the archive\'s one writer');
    let location: LeaseLocation | 'archive';
    try {
      location = String(values.lease) === 'archive' ? 'archive' : parseLeaseUrl(String(values.lease));
    } catch (err) {
      if (err instanceof LeaseUrlError) throw new CliUsageError(`--lease: ${err.message} (or the word archive, for a lease kept in the archive itself)`);
      throw err;
    }
    const ttl = Number(values['lease-ttl']);
    if (!Number.isInteger(ttl) || ttl < 2 || ttl > 3600) throw new CliUsageError('--lease-ttl must be an integer from 2 to 3600 (seconds)');
    const failover = String(values.failover);
    if (failover !== 'auto' && failover !== 'manual') throw new CliUsageError('--failover must be auto or manual');
    if (failover === 'auto' && values.follow === undefined && values.cluster === undefined) throw new CliUsageError('--failover auto needs --follow: only a standby fails over');
    if (failover === 'auto' && location === 'archive') throw new CliUsageError('--failover auto needs --lease etcd://…: with --lease archive the writer writes no heartbeat a standby could miss; promote it with cairn promote');
    lease = { location, ttlSeconds: ttl, failover };
  } else if (values['failover'] !== 'manual' && values.cluster === undefined) {
    throw new CliUsageError('--failover auto needs --lease: a standby fails over by itself only once the writer\'s lease in etcd expired');
  }
  // --cluster: etcd's URL checked now; etcd is reached once the server runs.
  let cluster: ServerOptions['cluster'];
  if (values.cluster !== undefined) {
    let location: LeaseLocation;
    try {
      location = parseLeaseUrl(String(values.cluster));
    } catch (err) {
      if (err instanceof LeaseUrlError) throw new CliUsageError(`--cluster: ${err.message}`);
      throw err;
    }
    const node = values.node === undefined ? defaultNodeName() : String(values.node);
    if (!NODE_NAME.test(node)) throw new CliUsageError('--node: a node name is 1 to 63 of a-z, 0-9, ".", "_" and "-", starting with a letter or digit');
    const ttl = Number(values['cluster-ttl']);
    if (!Number.isInteger(ttl) || ttl < 2 || ttl > 3600) throw new CliUsageError('--cluster-ttl must be an integer from 2 to 3600 (seconds)');
    if (values['public-url'] === undefined && /^(0\.0\.0\.0|\[?::\]?)(:|$)/.test(String(values.bind))) throw new CliUsageError('--cluster on a wildcard --bind needs --public-url: the other nodes must know where to reach this one');
    // Accounts and tokens live in each data directory's access.log: a token made on one node
    // would not authenticate a request passed to another.
    if (values.auth !== undefined && String(values.auth) !== 'none') throw new CliUsageError('--cluster with --auth tokens is not supported: each node keeps its own accounts and tokens; put the nodes behind a front door that names the user (--ui-identity-header), or serve without accounts');
    if (values.follow !== undefined) throw new CliUsageError('--cluster and --follow exclude each other: a node owns the repositories placed on it (a repository moves between nodes with cairn repo move)');
    const failover = String(values.failover);
    if (failover !== 'auto' && failover !== 'manual') throw new CliUsageError('--failover must be auto or manual');
    if (failover === 'auto' && values.archive === undefined) throw new CliUsageError('--cluster with --failover auto needs --archive: a node takes a down node\'s repositories from that node\'s archive, and keeps them in its own');
    // Another node's archive, opened as this node opens its own (the same --archive-config and key).
    const openPeerArchive = (url: string) => openArchiveStore('a node\'s archive', url).catch((err: Error) => { throw new Conflict(`cannot open the archive ${url}: ${err.message}`); });
    let readReplicas: 'all' | Set<number> | undefined;
    if (values['read-replicas'] !== undefined) {
      const v = String(values['read-replicas']);
      if (v === 'all') readReplicas = 'all';
      else {
        const parts = v.split(',');
        if (!parts.every((p) => /^(0|[1-9][0-9]{0,9})$/.test(p) && Number(p) <= 0xffff_ffff)) throw new CliUsageError('--read-replicas takes all, or repository indexes separated by commas (3,7)');
        readReplicas = new Set(parts.map(Number));
      }
    }
    const failoverAfter = Number(values['failover-after']);
    if (!Number.isInteger(failoverAfter) || failoverAfter < 0 || failoverAfter > 86_400) throw new CliUsageError('--failover-after must be a whole number of seconds from 0 to 86400');
    cluster = { location, node, ttlSeconds: ttl, failover, failoverAfterMs: failoverAfter * 1000, openArchive: openPeerArchive, ...(readReplicas ? { readReplicas } : {}) };
  } else if (values.node !== undefined) {
    throw new CliUsageError('--node needs --cluster etcd://HOST:PORT/PREFIX');
  } else if (values['read-replicas'] !== undefined) {
    throw new CliUsageError('--read-replicas needs --cluster etcd://HOST:PORT/PREFIX: a replica follows another node\'s repository');
  }
  // The TLS and auth flags, for every etcd the server reaches.
  {
    const etcds = [...(lease && lease.location !== 'archive' ? [lease.location] : []), ...(cluster ? [cluster.location] : [])];
    const accessOf = await etcdAccess(values, etcds);
    if (lease && lease.location !== 'archive') lease = { ...lease, ...accessOf(lease.location) };
    if (cluster) cluster = { ...cluster, ...accessOf(cluster.location) };
  }
  let archive: ArchivingOptions | undefined;
  if (values.archive !== undefined) {
    const url = String(values.archive);
    const store = await openArchiveStore('--archive', url);
    archive = {
      url,
      store,
      intervalMs: positive('archive-interval-ms', 3_600_000),
      lagWarnSeconds: positive('archive-lag-warn-seconds', 86_400 * 365),
      checkpointRanges: positive('archive-checkpoint-ranges', 1_000_000),
      leaseSeconds: positive('archive-lease-seconds', 86_400),
      ...shipping(),
    };
    if (values['archive-keep'] !== undefined) {
      try {
        archive.prune = {
          policy: parseRetention(String(values['archive-keep']), '--archive-keep'),
          graceMs: parseDuration(String(values['archive-prune-grace']), '--archive-prune-grace'),
          everyMs: Math.max(1000, parseDuration(String(values['archive-prune-every']), '--archive-prune-every')),
        };
      } catch (err) {
        throw new CliUsageError((err as Error).message);
      }
    }
    if (values['archive-verify-every'] !== undefined) {
      try {
        archive.verify = { everyMs: Math.max(1000, parseDuration(String(values['archive-verify-every']), '--archive-verify-every')) };
      } catch (err) {
        throw new CliUsageError((err as Error).message);
      }
    }
  } else if (values['archive-config'] !== undefined && values.follow === undefined) {
    throw new CliUsageError('--archive-config needs --archive or --follow');
  } else if (values['archive-key-file'] !== undefined && values.follow === undefined) {
    throw new CliUsageError('--archive-key-file needs --archive or --follow');
  }
  if (values['promote-secret-file'] !== undefined && values.follow === undefined && values.archive === undefined) throw new CliUsageError('--promote-secret-file needs --follow (it guards the promotion) or --archive (it guards the handover to a standby)');
  const promoteSecret = values['promote-secret-file'] === undefined ? null : await readSecretFile('--promote-secret-file', String(values['promote-secret-file']), true);
  let follow: ServerOptions['follow'];
  if (values.follow !== undefined) {
    if (archive) throw new CliUsageError('--follow and --archive exclude each other: a follower ships only after its promotion');
    const url = String(values.follow);
    const dataDir = path.resolve(String(values.data));
    let fenced: string | null;
    try {
      fenced = await fencedRefusal(new Layout(dataDir).archiveFile, dataDir);
    } catch (err) {
      throw new CliUsageError(`--follow: ${(err as Error).message}`);
    }
    if (fenced !== null) throw new CliUsageError(`--follow: ${fenced}`);
    const store = await openArchiveStore('--follow', url);
    follow = { url, store, intervalMs: positive('follow-interval-ms', 3_600_000), shipIntervalMs: positive('archive-interval-ms', 3_600_000), ship: shipping() };
    // Trimming old events would be a commit of the follower's own: its files change only by manifests.
    events.retention = null;
  }
  const whole = (flag: string, max: number): number => {
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < 0 || n > max) throw new CliUsageError(`--${flag} must be an integer from 0 to ${max}`);
    return n;
  };
  const git: GitLimits = {
    places: positive('git-places', 1024),
    perClient: positive('git-places-per-client', 1024),
    perRepository: positive('git-places-per-repository', 1024),
    queueMs: whole('git-queue-seconds', 3600) * 1000,
    bodyTimeoutMs: positive('git-body-timeout-seconds', 3600) * 1000,
    minBytesPerSecond: whole('git-body-min-rate', 1024 * 1024 * 1024),
  };
  const running = await startServer({ host, port, dataDir: path.resolve(String(values.data)), log, requestLog, activationDelayMs, jobPolicy, lockStaleMs, ui, webhooks, webhookAllow, events, queue, allowedHosts, allowedOrigins, publicUrl, shutdownSeconds, maxSnapshotPaths, identity, gitMirrors, git, archive, follow, promoteSecret, lease, cluster, insecureOpen: values['insecure-open'] === true, auth, newSealKey: values['new-seal-key'] === true });
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      log.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    signalled = true;
    void running.stop();
    // The bound holds even if the drain does not finish (a stalled disk): acknowledged writes
    // are durable already, and the next start recovers anything cut off.
    setTimeout(() => {
      log.error({ shutdown_seconds: shutdownSeconds }, 'stopping took longer than --shutdown-seconds; exiting now');
      process.exit(1);
    }, shutdownSeconds * 1000).unref();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const code = await running.done;
  // Stopped: nothing left may keep the process (a library's socket or timer).
  setTimeout(() => process.exit(code), 200).unref();
  return code;
}
