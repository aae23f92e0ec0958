package io.lancecontext.core.options;

import io.lancecontext.core.options.ConfigOption.Scope;
import java.time.Duration;
import java.util.List;

/**
 * Every store option, with its default and description: the same keys in Spark ({@code .option(..)},
 * table properties) and Flink ({@code WITH (..)}). Unknown keys are an error. {@code docs/options.md}
 * lists these and a test keeps the two in step.
 */
public final class StoreOptions {
  private StoreOptions() {}

  /** Prefix of options passed to Lance's object store (credentials, endpoints); values are redacted. */
  public static final String STORAGE_PREFIX = "storage.";

  public static final ConfigOption<String> PATH = ConfigOption.required("path", s -> s, Scope.STORE,
      "Location of the store (a directory path or a URI such as file:///data/ctx or s3://bucket/ctx).");

  public static final ConfigOption<String> SCHEMA = ConfigOption.optional("schema", s -> s, Scope.STORE,
      "The store's schema when it is created: a preset name (context, rollout, datagen) or a JSON schema "
          + "spec. Omit it to reuse the spec stored with an existing store; giving a different spec fails.");

  public static final ConfigOption<Integer> EMBEDDING_DIM = ConfigOption.of("schema.embedding-dim", "1536",
      OptionParsers::positiveInt, Scope.STORE, "Dimension of the preset schemas' embedding vector column.");

  public static final ConfigOption<Integer> SHARDS = ConfigOption.of("shards", "4", OptionParsers::positiveInt, Scope.STORE,
      "Number of key buckets, fixed when the store is created. Each bucket has at most one writer at a time, "
          + "which writes two MemWAL shards (its lanes) in turn.");

  public static final ConfigOption<Long> CACHE_BYTES = ConfigOption.optional("cache.bytes", OptionParsers::bytes, Scope.JVM,
      "Byte budget of the JVM's shared Lance session (index and metadata caches, split 6:1). Precedence: this "
          + "option, then the system property or environment variable LANCECONTEXT_CACHE_BYTES, then 2GiB. "
          + "0 disables sharing (each store gets lance-core's own 6 GiB + 1 GiB session).");

  public static final ConfigOption<Duration> PUT_TIMEOUT = ConfigOption.of("write.put-timeout", "60s",
      OptionParsers::positiveDuration, Scope.RESIDENT,
      "An add whose put does not complete in this time, including the time spent winning its shard back from another "
          + "writer, fails with a not-acknowledged error (fenced or timed out); a writer whose put hangs is abandoned.");

  public static final ConfigOption<Duration> FENCE_BACKOFF = ConfigOption.of("write.fence-backoff", "1s",
      OptionParsers::duration, Scope.RESIDENT, "After another writer claims a shard, this JVM waits this long (jittered 0.5 to 1.5 times, "
          + "doubled for every further loss before its next put, at most a quarter of write.put-timeout) before claiming it back; adds to the shard wait meanwhile, so that two "
          + "writers cannot take a shard from each other on every add.");

  public static final ConfigOption<Duration> IDLE_TIMEOUT = ConfigOption.of("write.idle-timeout", "5min",
      OptionParsers::positiveDuration, Scope.RESIDENT,
      "A resident bucket writer idle this long is closed (its memtable sealed into a generation).");

  public static final ConfigOption<Integer> BATCH_ROWS = ConfigOption.of("write.batch-rows", "8192",
      OptionParsers::positiveInt, Scope.HANDLE, "A writer handle puts its buffered rows once it holds this many.");

  public static final ConfigOption<Long> BATCH_BYTES = ConfigOption.of("write.batch-bytes", "64MiB",
      OptionParsers::bytes, Scope.RESIDENT, "A writer handle puts its buffered rows once they take this many bytes; also the "
          + "size at which a bucket seals its open generation, unless its share of read.fresh-cache-bytes is smaller.");

  public static final ConfigOption<String> WRITE_COMMIT = ConfigOption.of("write.commit", "immediate", s -> {
    String v = s.trim().toLowerCase(java.util.Locale.ROOT);
    if (!v.equals("immediate") && !v.equals("atomic")) {
      throw new IllegalArgumentException("expected immediate or atomic");
    }
    return v;
  }, Scope.HANDLE, "The commit mode of write handles that do not choose one: immediate (each put durable and visible "
      + "on return) or atomic (rows staged under a transaction, visible together when it is published; such a handle "
      + "needs a transaction id, WriterOptions.Builder.transaction). The default is core's; the engines choose their "
      + "own when it is not set: Spark batch writes atomic, Spark streaming per epoch atomic, Flink from "
      + "sink.delivery-guarantee (exactly-once atomic, at-least-once immediate).");

  public static final ConfigOption<Integer> BULK_ROWS = ConfigOption.optional("write.bulk-rows",
      OptionParsers::positiveInt, Scope.HANDLE, "An immediate write of at least this many rows (a handle's full buffer, "
      + "a large Arrow batch or add) is written once as Lance data and published as a one-part transaction, instead of "
      + "as WAL entries flushed into generations later; smaller writes take the WAL path. Unset: write.batch-rows.");

  public static final ConfigOption<Integer> MERGE_GENERATIONS = ConfigOption.of("merge.trigger.generations", "8",
      OptionParsers::positiveInt, Scope.RESIDENT, "Merge flushed generations into the base table once this many are unmerged.");

  public static final ConfigOption<Duration> MERGE_INTERVAL = ConfigOption.of("merge.trigger.interval", "60s",
      OptionParsers::positiveDuration, Scope.RESIDENT, "Merge unmerged generations at least this often.");

  public static final ConfigOption<Long> MERGE_MAX_BYTES = ConfigOption.of("merge.max-bytes", "32MiB", OptionParsers::bytes,
      Scope.RESIDENT, "Generation and transaction-part bytes one merge folds into the base table at most (at least one "
          + "input): whole buckets while they fit, then the oldest rows of one bucket (a write-sequence prefix); the "
          + "rest is left to the next merge. Also the size at which an atomic handle writes a bucket's staged rows "
          + "as a part. Bounds a merge's memory: lance-core 7.0.0's merge-insert fails above about 100 MB of input "
          + "rows in memory (its hash-join pool), and rows take more memory than their files.");

  public static final ConfigOption<Integer> MERGE_MAX_INPUTS = ConfigOption.of("merge.max-inputs", "64",
      OptionParsers::positiveInt, Scope.RESIDENT, "Generations and transaction parts one merge takes at most (chosen "
          + "as for merge.max-bytes); the rest is left to the next merge.");

  public static final ConfigOption<Integer> MERGE_APPEND_MIN_ROWS = ConfigOption.of("merge.append-min-rows", "8192",
      OptionParsers::positiveInt, Scope.RESIDENT, "A published transaction part, or a flushed generation without deletions, "
          + "of at least this many rows whose every row wins its merge becomes a base-table fragment as it is (its data "
          + "file linked, or copied on the object store's side, not rewritten); smaller ones are rewritten with the "
          + "merge's other rows. An appended part or generation stays a fragment of its own until compaction.");

  public static final ConfigOption<Duration> FLUSH_TIMEOUT = ConfigOption.of("merge.flush-timeout", "10min",
      OptionParsers::positiveDuration, Scope.RESIDENT, "How long ContextStore.flush() keeps sealing and merging before "
          + "it returns incomplete.");

  public static final ConfigOption<Duration> GC_GRACE = ConfigOption.of("gc.grace", "10min", OptionParsers::duration, Scope.RESIDENT,
      "Merged generations, WAL files and old base versions are deleted once they are this old.");

  public static final ConfigOption<Duration> TXN_TIMEOUT = ConfigOption.of("txn.timeout", "1h",
      OptionParsers::positiveDuration, Scope.HANDLE, "How long an unpublished transaction stays publishable after its "
          + "owner last renewed it. Open atomic handles, the Spark driver of a write and each staged part renew it "
          + "(every quarter of this), so a transaction lives as long as the job that owns it; once its owner is gone "
          + "(a failed Flink job waiting to be restored, a streaming query stopped before its epoch's commit), "
          + "garbage collection aborts it this long after the last renewal and deletes its staged rows. A Flink "
          + "exactly-once sink needs more than its checkpoint interval plus checkpoint timeout, and a restore within "
          + "it; a Spark streaming epoch replayed later re-stages and publishes under a new attempt.");

  public static final ConfigOption<Duration> READ_LEASE_TIMEOUT = ConfigOption.of("read.lease-timeout", "1h",
      OptionParsers::positiveDuration, Scope.HANDLE, "How long a planned read stays readable after its holder last "
          + "renewed its lease (ContextStore.holdRead: a Spark scan while its DataFrame is reachable, a Flink source "
          + "while its job runs). Without a lease a plan is readable for gc.grace after it was made; with one, "
          + "garbage collection keeps what the plan reads until this long after the last renewal (a Flink job "
          + "restoring its splits must do so within it).");

  public static final ConfigOption<Duration> SNAPSHOT_RETENTION = ConfigOption.of("snapshot.retention", "1h",
      OptionParsers::positiveDuration, Scope.HANDLE, "How long an untagged snapshot (ContextStore.snapshot) stays "
          + "readable by its token: garbage collection keeps what it reads until this long after it was taken (a "
          + "tagged one until its tag is dropped). Each snapshot costs one small object write; while one is kept, "
          + "so is everything written after it (a tag keeps its own snapshot's files only).");

  public static final ConfigOption<Boolean> COMPACTION_BACKGROUND = ConfigOption.of("compaction.background", "false",
      OptionParsers::bool, Scope.RESIDENT, "Compact the base table's fragments in a background task of the writing JVM.");

  public static final ConfigOption<Integer> COMPACTION_TARGET_ROWS = ConfigOption.of(
      "compaction.target-rows-per-fragment", "1048576", OptionParsers::positiveInt, Scope.RESIDENT,
      "Target rows per fragment when compacting the base table.");

  public static final ConfigOption<KeyIndexType> INDEX_KEY = ConfigOption.of("index.key", "btree", KeyIndexType::parse, Scope.RESIDENT,
      "Scalar index on the key column: btree (pages of 16,384 keys), zonemap or none. Ensured on open and after "
          + "compaction.");

  public static final ConfigOption<java.util.List<String>> SEARCH_TEXT_COLUMNS = ConfigOption.of("search.text-columns",
      "text_payload", OptionParsers::names, Scope.RESIDENT, "The string columns maintenance keeps a full-text (inverted) "
          + "index on, comma-separated, built and rebuilt as the vector indexes are (search.index.min-rows). Full-text "
          + "search works on every string column; without an index it reads the column's base rows. The default names "
          + "no column of a store without text_payload; an explicit name that is not a string column fails the open.");

  public static final ConfigOption<Integer> SEARCH_INDEX_MIN_ROWS = ConfigOption.of("search.index.min-rows", "50000",
      OptionParsers::positiveInt, Scope.RESIDENT, "Rows in the base table from which maintenance builds a vector index "
          + "(IVF-PQ) on each vector column; it rebuilds one when more than a tenth of the base is not covered (merges "
          + "append such rows) and after a compaction. Searches read the rows an index does not cover exactly, so "
          + "a missing or stale index makes them slower, never wrong. ContextStore.buildSearchIndexes builds them now.");

  public static final ConfigOption<Duration> SEARCH_INDEX_CHECK_INTERVAL = ConfigOption.of("search.index.check-interval",
      "10s", OptionParsers::positiveDuration, Scope.RESIDENT, "How often the writing JVM's maintenance checks whether a "
          + "vector index is due (search.index.min-rows reached, or more than a tenth of the base not covered); the check "
          + "reads nothing but the base table's manifest it already holds. It waits while merges have a backlog (the last "
          + "merge left generations for the next), at most search.index.rebuild-interval: the index is then built over "
          + "the whole of a bulk load once it is merged.");

  public static final ConfigOption<Duration> SEARCH_INDEX_REBUILD_INTERVAL = ConfigOption.of(
      "search.index.rebuild-interval", "5min", OptionParsers::duration, Scope.RESIDENT, "Fewest time between two "
          + "vector index builds by the writing JVM's maintenance: a build takes tens of seconds of every core (about "
          + "40 s per million 128-dimension rows on 2 cores) and merges wait for it, so a store that grows fast "
          + "rebuilds at most this often; searches read what the index does not cover exactly meanwhile.");

  public static final ConfigOption<Integer> SEARCH_NPROBES = ConfigOption.of("search.nprobes", "32",
      OptionParsers::positiveInt, Scope.HANDLE, "IVF partitions a vector search probes in the base table's index: more "
          + "finds more of the true nearest rows (recall) and costs more time.");

  public static final ConfigOption<Integer> SEARCH_REFINE_FACTOR = ConfigOption.of("search.refine-factor", "20",
      OptionParsers::positiveInt, Scope.HANDLE, "A vector search takes this many times k candidates from the base "
          + "table's index and ranks them by their exact distance.");

  public static final ConfigOption<Long> FRESH_CACHE_BYTES = ConfigOption.of("read.fresh-cache-bytes", "256MiB",
      OptionParsers::bytes, Scope.RESIDENT, "Bytes of decoded fresh-tier data (WAL entries, generation keys) a resident "
      + "store keeps loaded between reads; the least recently used are dropped beyond it and read again when needed. "
      + "Data an open read uses stays valid whatever the bound. At most an eighth more holds hashes of the base "
      + "table's keys (up to 10 bytes per row), with which lookups by key skip the fragments that cannot hold them. "
      + "Writers seal each bucket's open generation once it takes half of this divided by the shards (at least 1 MiB, "
      + "at most write.batch-bytes; a little less for each bucket, so that they seal one after the other), so that readers "
      + "hold the WAL entries of every shard.");

  /** Every option, in documentation order. */
  public static final List<ConfigOption<?>> ALL = List.of(PATH, SCHEMA, EMBEDDING_DIM, SHARDS, CACHE_BYTES,
      PUT_TIMEOUT, FENCE_BACKOFF, IDLE_TIMEOUT, BATCH_ROWS, BATCH_BYTES, WRITE_COMMIT, BULK_ROWS, MERGE_GENERATIONS, MERGE_INTERVAL,
      MERGE_MAX_BYTES, MERGE_MAX_INPUTS, MERGE_APPEND_MIN_ROWS, FLUSH_TIMEOUT, GC_GRACE, TXN_TIMEOUT, READ_LEASE_TIMEOUT,
      SNAPSHOT_RETENTION, COMPACTION_BACKGROUND, COMPACTION_TARGET_ROWS, INDEX_KEY, SEARCH_TEXT_COLUMNS, SEARCH_INDEX_MIN_ROWS,
      SEARCH_INDEX_CHECK_INTERVAL, SEARCH_INDEX_REBUILD_INTERVAL, SEARCH_NPROBES,
      SEARCH_REFINE_FACTOR, FRESH_CACHE_BYTES);
}
