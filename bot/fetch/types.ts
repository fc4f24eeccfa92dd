/**
 * Shapes of the fetch step (accepted → fetched).
 */

/** What the fetch step needs to know about a job. */
export interface FetchRequest {
  readonly jobId: number;
  readonly fileId: string;
  /** Declared `file_size` from the message, bytes, or null. */
  readonly declaredSize: number | null;
  /**
   * Cloud: final path of the source, generated (`downloads/<job>-<random>`); the file is `<destPath>.part` until
   * verified. Local mode writes nothing and ignores it (the server's file is the source, read in place).
   */
  readonly destPath: string;
  /** The current mode's download limit, bytes. */
  readonly limit: number;
  /** The step's signal (lease lost, /cancel, shutdown): its abort rethrows as is, not as a classified failure. */
  readonly signal?: AbortSignal;
  /** Longest wait for the next bytes, ms (DOWNLOAD_IDLE_TIMEOUT); a stall → retryable `download_failed`. None when absent. */
  readonly idleTimeoutMs?: number;
  /** Longest whole try (getFile + body), ms (bot/fetch/timeouts.ts downloadDeadlineMs) → retryable `download_failed`. None when absent. */
  readonly deadlineMs?: number;
  /** Progress callback: bytes so far and the expected total (or null). */
  readonly onProgress?: (bytes: number, total: number | null) => void;
}

/** A verified source on disk. */
export interface FetchedFile {
  /** Cloud: `destPath`, written by docket. Local: the server's file, resolved inside LOCAL_BOT_API_DIR, read in place. */
  readonly path: string;
  /** Real size on disk, bytes. */
  readonly size: number;
  /** Hex SHA-256. */
  readonly sha256: string;
}

/** A fetcher for one Bot API mode. Throws `FetchError` with a classified failure. */
export type Fetcher = (req: FetchRequest) => Promise<FetchedFile>;
