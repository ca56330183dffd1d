// The S3 implementation of the object-store seam (lib/archive/object-store.ts), through the AWS
// SDK v3. Configuration follows the SDK's conventions: the standard environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION,
// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL), or a JSON file (`--archive-config`) whose fields
// win over the environment; without keys in either, the SDK's own chain (shared files,
// instance roles) finds them. Path-style addressing whenever a custom endpoint is set (MinIO,
// Ceph, Swift), virtual-host style otherwise. Secrets are never part of a message or a log.
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createHash, randomBytes } from 'node:crypto';
import {
  S3Client,
  PutObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  DeleteObjectCommand,
  type PutObjectCommandInput,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import {
  ObjectStoreError,
  checkKey,
  checkPutOptions,
  sha256Hex,
  verified,
  type Body,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
} from './object-store.js';
import { parseArchiveUrl, type ArchiveTarget } from './archive-url.js';

export { parseArchiveUrl, canonicalArchiveUrl, sameArchiveUrl, type ArchiveTarget } from './archive-url.js';

/** The connection settings. `secretAccessKey` is never printed (see `describeSettings`). */
export interface S3Settings {
  region: string;
  endpoint?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  forcePathStyle: boolean;
  /** Single PUT up to this size; multipart above it (lib-storage). */
  multipartThreshold: number;
  partSize: number;
  /** Tries of one request (the SDK's bounded retry with backoff), at least 1. */
  maxAttempts: number;
  /** A connection not made within this long fails the try. */
  connectTimeoutMs: number;
  /** A request that moves no byte (sent or received) for this long fails the try. */
  timeoutMs: number;
}

/** Defaults of the bounds on every request (docs/operations.md "Configure"). */
export const DEFAULT_TIMEOUTS = { connectTimeoutMs: 5_000, timeoutMs: 20_000, maxAttempts: 3 } as const;

const STRING_FIELDS = ['region', 'endpoint', 'access_key_id', 'secret_access_key', 'session_token'] as const;
const NUMBER_FIELDS = { connect_timeout_ms: [100, 600_000], timeout_ms: [100, 3_600_000], max_attempts: [1, 10] } as const;
const FILE_FIELDS = [...STRING_FIELDS, 'force_path_style', ...Object.keys(NUMBER_FIELDS)] as const;

function checkEndpoint(endpoint: string, from: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ObjectStoreError('config', `${from}: the endpoint is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ObjectStoreError('config', `${from}: the endpoint must be http:// or https://`);
  // A key in the URL would end up in logs and messages; keys belong in their own settings.
  if (url.username !== '' || url.password !== '') throw new ObjectStoreError('config', `${from}: the endpoint must not carry credentials`);
  if (url.search !== '' || url.hash !== '') throw new ObjectStoreError('config', `${from}: the endpoint must not carry a query or a fragment`);
  // One spelling: the scheme and host in lower case, no default port, no trailing slash.
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * Settings from the environment and, when given, the text of a JSON configuration file
 * (`{"region", "endpoint", "access_key_id", "secret_access_key", "session_token",
 * "force_path_style", "connect_timeout_ms", "timeout_ms", "max_attempts"}`, all optional); the
 * file's fields win.
 */
export function s3Settings(env: NodeJS.ProcessEnv, configText?: string, configName = 'archive configuration'): S3Settings {
  let file: Record<string, unknown> = {};
  if (configText !== undefined) {
    try {
      file = JSON.parse(configText) as Record<string, unknown>;
    } catch {
      throw new ObjectStoreError('config', `${configName} is not JSON`);
    }
    if (typeof file !== 'object' || file === null || Array.isArray(file)) throw new ObjectStoreError('config', `${configName} must be a JSON object`);
    for (const [k, v] of Object.entries(file)) {
      if (!(FILE_FIELDS as readonly string[]).includes(k)) throw new ObjectStoreError('config', `${configName}: unknown field ${JSON.stringify(k)} (known: ${FILE_FIELDS.join(', ')})`);
      if (k in NUMBER_FIELDS) {
        const [min, max] = NUMBER_FIELDS[k as keyof typeof NUMBER_FIELDS];
        if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new ObjectStoreError('config', `${configName}: ${k} must be an integer from ${min} to ${max}`);
      } else if (k === 'force_path_style' ? typeof v !== 'boolean' : typeof v !== 'string' || v === '') {
        throw new ObjectStoreError('config', `${configName}: ${k} must be ${k === 'force_path_style' ? 'true or false' : 'a non-empty string'}`);
      }
    }
  }
  const str = (k: string): string | undefined => file[k] as string | undefined;
  const envOf = (k: string): string | undefined => (env[k] === undefined || env[k] === '' ? undefined : env[k]);
  const endpointRaw = str('endpoint') ?? envOf('AWS_ENDPOINT_URL_S3') ?? envOf('AWS_ENDPOINT_URL');
  const endpoint = endpointRaw === undefined ? undefined : checkEndpoint(endpointRaw, str('endpoint') ? configName : 'AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL');
  const region = str('region') ?? envOf('AWS_REGION') ?? envOf('AWS_DEFAULT_REGION');
  if (region === undefined) throw new ObjectStoreError('config', `no region: set AWS_REGION or "region" in the ${configName}`);
  const accessKeyId = str('access_key_id') ?? (file.secret_access_key === undefined ? envOf('AWS_ACCESS_KEY_ID') : undefined);
  const secretAccessKey = str('secret_access_key') ?? (file.access_key_id === undefined ? envOf('AWS_SECRET_ACCESS_KEY') : undefined);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ObjectStoreError('config', 'an access key id needs its secret access key and the other way round');
  }
  const sessionToken = str('session_token') ?? (accessKeyId !== undefined && file.access_key_id === undefined ? envOf('AWS_SESSION_TOKEN') : undefined);
  const settings: S3Settings = {
    region,
    forcePathStyle: (file.force_path_style as boolean | undefined) ?? endpoint !== undefined,
    multipartThreshold: 32 * 1024 * 1024,
    partSize: 8 * 1024 * 1024,
    maxAttempts: (file.max_attempts as number | undefined) ?? DEFAULT_TIMEOUTS.maxAttempts,
    connectTimeoutMs: (file.connect_timeout_ms as number | undefined) ?? DEFAULT_TIMEOUTS.connectTimeoutMs,
    timeoutMs: (file.timeout_ms as number | undefined) ?? DEFAULT_TIMEOUTS.timeoutMs,
  };
  if (endpoint !== undefined) settings.endpoint = endpoint;
  if (accessKeyId !== undefined) settings.accessKeyId = accessKeyId;
  if (secretAccessKey !== undefined) settings.secretAccessKey = secretAccessKey;
  if (sessionToken !== undefined) settings.sessionToken = sessionToken;
  return settings;
}

/** Settings from the environment and the file at `configPath` (when given). */
export async function loadS3Settings(env: NodeJS.ProcessEnv, configPath?: string): Promise<S3Settings> {
  if (configPath === undefined) return s3Settings(env);
  let text: string;
  try {
    text = await readFile(configPath, 'utf8');
  } catch (err) {
    throw new ObjectStoreError('config', `cannot read the archive configuration ${configPath}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  return s3Settings(env, text, `archive configuration ${configPath}`);
}

/** What may be printed about the settings: no secret, not even part of one. */
export function describeSettings(s: S3Settings): Record<string, unknown> {
  return {
    region: s.region,
    endpoint: s.endpoint ?? '(AWS default)',
    addressing: s.forcePathStyle ? 'path-style' : 'virtual-host',
    credentials: s.accessKeyId !== undefined ? 'static keys' : 'the SDK default chain',
    timeouts: { connect_ms: s.connectTimeoutMs, idle_ms: s.timeoutMs, attempts: s.maxAttempts },
  };
}

interface SdkError {
  name?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
}

/** One SDK failure as an ObjectStoreError: the operation, key, status and S3 code only. */
export function mapS3Error(op: string, where: string, err: unknown): ObjectStoreError {
  if (err instanceof ObjectStoreError) return err;
  const e = (err ?? {}) as SdkError;
  const status = e.$metadata?.httpStatusCode;
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const code = typeof e.code === 'string' ? e.code : undefined;
  const said = `${op} ${where}: ${status !== undefined ? `${status} ` : ''}${code ?? name}`;
  if (status === 404 || name === 'NoSuchKey' || name === 'NoSuchBucket' || name === 'NotFound') return new ObjectStoreError('not-found', said, status);
  if (status === 401 || status === 403) return new ObjectStoreError('denied', `${said} (check the archive credentials)`, status);
  if (status === 501 || name === 'NotImplemented') return new ObjectStoreError('not-implemented', said, status);
  if (status === 429 || name === 'SlowDown' || name === 'ThrottlingException' || name === 'TooManyRequestsException') return new ObjectStoreError('throttled', said, status);
  if (status !== undefined && status >= 500) return new ObjectStoreError('unavailable', said, status);
  if (status === undefined) {
    // No answer: the network (refused, reset, timed out) — worth retrying.
    return new ObjectStoreError('unavailable', `${op} ${where}: no answer from the object store (${code ?? name})`);
  }
  return new ObjectStoreError('other', said, status);
}

function isPreconditionFailed(err: unknown): boolean {
  const e = (err ?? {}) as SdkError;
  return e.$metadata?.httpStatusCode === 412 || e.name === 'PreconditionFailed';
}

const quiet = (): void => undefined;
const SILENT = { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet };

export class S3ObjectStore implements ObjectStore {
  readonly description: string;
  private readonly client: S3Client;
  /** The probe's answer once one was had (a failed probe is not an answer: it is tried again). */
  private conditional: boolean | undefined;
  private probing: Promise<boolean> | undefined;

  constructor(readonly target: ArchiveTarget, private readonly settings: S3Settings) {
    this.description = `s3://${target.bucket}/${target.prefix}${settings.endpoint ? ` at ${settings.endpoint}` : ''}`;
    this.client = new S3Client({
      region: settings.region,
      ...(settings.endpoint !== undefined ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.forcePathStyle,
      // Every request is bounded: a connection within connectTimeoutMs, then no more than
      // timeoutMs without a byte either way (a hung store, a stalled body), each try; the
      // SDK retries such a failure with backoff, up to maxAttempts tries in all.
      maxAttempts: settings.maxAttempts,
      requestHandler: { connectionTimeout: settings.connectTimeoutMs, socketTimeout: settings.timeoutMs },
      // Failures reach the caller as ObjectStoreErrors; the SDK's default would print some to
      // the console (a failed streaming put, which it never retries: `Body` is a factory so
      // the caller can).
      logger: SILENT,
      // Integrity is checked with the sha256 each put names; the SDK's default extra CRC
      // checksums use aws-chunked trailers that S3-compatible stores (Swift 2.30) refuse.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(settings.accessKeyId !== undefined && settings.secretAccessKey !== undefined
        ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey, ...(settings.sessionToken ? { sessionToken: settings.sessionToken } : {}) } }
        : {}),
    });
  }

  private where(key: string): string {
    return `${this.target.bucket}/${this.target.prefix}${key}`;
  }

  private full(key: string): string {
    checkKey(key);
    return this.target.prefix + key;
  }

  async put(key: string, body: Body, options: PutOptions): Promise<void> {
    await this.send(key, body, options, false);
  }

  async putIfAbsent(key: string, body: Body, options: PutOptions): Promise<'created' | 'exists'> {
    return this.send(key, body, options, true);
  }

  private async send(key: string, body: Body, options: PutOptions, ifAbsent: boolean): Promise<'created' | 'exists'> {
    const full = this.full(key);
    checkPutOptions(key, options);
    const base: PutObjectCommandInput = {
      Bucket: this.target.bucket,
      Key: full,
      Metadata: { sha256: options.sha256 },
      ContentType: 'application/octet-stream',
      ...(ifAbsent ? { IfNoneMatch: '*' } : {}),
    };
    try {
      if (Buffer.isBuffer(body)) {
        if (body.length !== options.size) throw new ObjectStoreError('integrity', `put ${this.where(key)}: ${body.length} bytes, ${options.size} named`);
        const digest = sha256Hex(body);
        if (digest !== options.sha256) throw new ObjectStoreError('integrity', `put ${this.where(key)}: sha256 ${digest}, ${options.sha256} named`);
        // Content-MD5 makes the store check what arrived.
        const md5 = createHash('md5').update(body).digest('base64');
        await this.client.send(new PutObjectCommand({ ...base, Body: body, ContentLength: body.length, ContentMD5: md5 }));
        return 'created';
      }
      // A stream is checked as it goes; its last chunk is held back until the whole body
      // proved right, so a wrong body never completes an object. A failed check aborts the
      // request (a piped body that errors would otherwise leave it waiting for bytes).
      const abort = new AbortController();
      let bodyError: unknown;
      const source = body();
      const stream = source.pipe(verified(`put ${this.where(key)}`, options));
      const fail = (err: unknown): void => { bodyError ??= err; abort.abort(); };
      source.on('error', fail);
      stream.on('error', fail);
      try {
        if (options.size <= this.settings.multipartThreshold || ifAbsent) {
          await this.client.send(new PutObjectCommand({ ...base, Body: stream, ContentLength: options.size }), { abortSignal: abort.signal });
          return 'created';
        }
        const upload = new Upload({
          client: this.client,
          params: { ...base, Body: stream },
          partSize: this.settings.partSize,
          queueSize: 2, // at most two parts in flight
          leavePartsOnError: false,
          abortController: abort,
        });
        await upload.done();
        return 'created';
      } catch (err) {
        if (bodyError !== undefined) throw bodyError instanceof ObjectStoreError ? bodyError : new ObjectStoreError('other', `put ${this.where(key)}: reading the body failed`);
        throw err;
      } finally {
        source.destroy();
      }
    } catch (err) {
      if (ifAbsent && isPreconditionFailed(err)) return 'exists';
      throw mapS3Error('put', this.where(key), err);
    }
  }

  async get(key: string): Promise<{ body: Readable; size: number; sha256?: string }> {
    const full = this.full(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.target.bucket, Key: full }));
      const body = out.Body as Readable | undefined;
      if (!body || typeof (body as Readable).pipe !== 'function') throw new ObjectStoreError('other', `get ${this.where(key)}: no body`);
      const result: { body: Readable; size: number; sha256?: string } = { body, size: out.ContentLength ?? 0 };
      const sha = out.Metadata?.sha256;
      if (sha !== undefined) result.sha256 = sha;
      return result;
    } catch (err) {
      throw mapS3Error('get', this.where(key), err);
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const full = this.full(key);
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.target.bucket, Key: full }));
      const info: ObjectInfo = { key, size: out.ContentLength ?? 0 };
      if (out.Metadata?.sha256 !== undefined) info.sha256 = out.Metadata.sha256;
      if (out.LastModified !== undefined) info.lastModified = out.LastModified;
      return info;
    } catch (err) {
      const mapped = mapS3Error('head', this.where(key), err);
      if (mapped.kind === 'not-found') return null;
      throw mapped;
    }
  }

  async list(prefix: string, options: { after?: string; limit?: number } = {}): Promise<ListPage> {
    const limit = Math.max(1, Math.min(options.limit ?? 1000, 1000));
    try {
      const out = await this.client.send(new ListObjectsV2Command({
        Bucket: this.target.bucket,
        Prefix: this.target.prefix + prefix,
        MaxKeys: limit,
        ...(options.after !== undefined ? { StartAfter: this.target.prefix + options.after } : {}),
      }));
      const objects: ObjectInfo[] = (out.Contents ?? []).map((o) => {
        const info: ObjectInfo = { key: (o.Key ?? '').slice(this.target.prefix.length), size: o.Size ?? 0 };
        if (o.LastModified !== undefined) info.lastModified = o.LastModified;
        return info;
      });
      const page: ListPage = { objects };
      if (out.IsTruncated && objects.length > 0) page.next = objects[objects.length - 1]!.key;
      return page;
    } catch (err) {
      throw mapS3Error('list', this.where(prefix + '*'), err);
    }
  }

  async delete(key: string): Promise<void> {
    const full = this.full(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.target.bucket, Key: full }));
    } catch (err) {
      const mapped = mapS3Error('delete', this.where(key), err);
      if (mapped.kind !== 'not-found') throw mapped;
    }
  }

  conditionalPut(probeKey?: string): Promise<boolean> {
    if (this.conditional !== undefined) return Promise.resolve(this.conditional);
    // A probe that failed (the store was down) is not remembered: the next call probes again,
    // under a fresh key.
    this.probing ??= this.probeConditional(probeKey ?? `probe/conditional-put-${process.pid}-${Date.now()}-${randomBytes(4).toString('hex')}`)
      .then((answer) => { this.conditional = answer; return answer; })
      .finally(() => { this.probing = undefined; });
    return this.probing;
  }

  private async probeConditional(probeKey: string): Promise<boolean> {
    const bytes = Buffer.from('cairn conditional-put probe\n');
    const options = { sha256: sha256Hex(bytes), size: bytes.length };
    try {
      try {
        if ((await this.putIfAbsent(probeKey, bytes, options)) !== 'created') return false;
      } catch (err) {
        if (err instanceof ObjectStoreError && err.kind === 'not-implemented') return false;
        throw err;
      }
      // Honoured only if the second try is refused; a store that ignores the header
      // overwrites and answers success.
      return (await this.putIfAbsent(probeKey, bytes, options)) === 'exists';
    } finally {
      await this.delete(probeKey).catch(() => undefined);
    }
  }

  /** Close the connections (the SDK keeps sockets alive). */
  close(): void {
    this.client.destroy();
  }
}

/** The archive store named by `url`, configured from `env` and the optional config file. */
export async function openS3Store(url: string, env: NodeJS.ProcessEnv, configPath?: string): Promise<S3ObjectStore> {
  const target = parseArchiveUrl(url);
  const settings = await loadS3Settings(env, configPath);
  return new S3ObjectStore(target, settings);
}

