package io.lancecontext.core;

import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.internal.store.HandleReads;
import io.lancecontext.core.internal.store.ResidentStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ReadLease;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.StoreSnapshot;
import io.lancecontext.core.read.TextQuery;
import io.lancecontext.core.read.VectorQuery;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The read side of a {@link ContextStore} handle: lookups, scans, counts, searches, split reads for engines,
 * snapshots and tags. Package-private: users call these methods on {@link ContextStore}, which adds writes,
 * transactions, maintenance and the handle's lifecycle.
 */
abstract class StoreHandle {
  final ResidentStore store;
  private final StoreConfig config;
  private final HandleReads reads;
  volatile boolean closed;

  StoreHandle(ResidentStore store, StoreConfig config) {
    this.store = store;
    this.config = config;
    this.reads = new HandleReads(store, config);
  }

  public SchemaSpec spec() {
    return store.spec();
  }

  public String uri() {
    return store.config().uri();
  }

  /** The options this handle was opened with. */
  public StoreConfig config() {
    return config;
  }

  public int shards() {
    return store.shards();
  }

  /** The bucket (shard number) of a key; engines cluster rows by it so that one task writes one shard. */
  public int bucketOf(String key) {
    return store.bucketOf(key);
  }

  final HandleReads reads() {
    check();
    return reads;
  }

  /** The resident store, once the handle is checked open. */
  final ResidentStore live() {
    check();
    return store;
  }

  final void check() {
    if (closed) {
      throw new StoreClosedException("this handle to " + uri() + " is closed", false);
    }
    store.ensureOpen();
  }

  // ---------------------------------------------------------------- reads

  /** The record with this key, unless it is deleted (or retired/expired, with capability lifecycle). */
  public Optional<Map<String, Object>> get(String key) {
    List<Map<String, Object>> found = get(List.of(key));
    return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
  }

  /** The records with these keys that exist (in no particular order). */
  public List<Map<String, Object>> get(Collection<String> keys) {
    return lookup(keys, store.spec().columnNames(), false);
  }

  /** Looks keys up, returning {@code columns}; {@code includeExpired} also returns retired/expired records. */
  public List<Map<String, Object>> lookup(Collection<String> keys, List<String> columns, boolean includeExpired) {
    return live().lookup(new ArrayList<>(keys), columns, includeExpired, Instant.now());
  }

  /**
   * Reads the LSM view as Arrow batches: as it is now, at the snapshot {@code spec} names
   * ({@link ScanSpec#atSnapshot}), or what changed between two ({@link ScanSpec#between}). Close the reader.
   *
   * @throws io.lancecontext.core.error.SnapshotNotFoundException if the snapshot is not kept (any more)
   */
  public StoreReader scan(ScanSpec spec) {
    return reader(reads().scan(spec));
  }

  final StoreReader reader(HandleReads.Read read) {
    return StoreReader.over(read.snapshot(), read.scan(), store.codec());
  }

  /** Reads the LSM view as records. */
  public List<Map<String, Object>> scanRecords(ScanSpec spec) {
    try (StoreReader reader = scan(spec)) {
      return reader.records();
    }
  }

  /** Visible records. */
  public long count() {
    return count(Predicate.alwaysTrue());
  }

  /** Visible records matching {@code filter} (without a filter, counted without reading rows where it can). */
  public long count(Predicate filter) {
    try (StoreReader reader = scan(ScanSpec.all().withColumns(List.of()).withFilter(filter))) {
      long n = 0;
      while (reader.next()) {
        n += reader.batch().getRowCount();
      }
      return n;
    }
  }

  /**
   * The {@code k} rows of the LSM view nearest to the query vector, nearest first, each with its
   * {@code _distance}: every acknowledged add is searchable as soon as it returns, only a key's newest row can
   * match, deleted rows never do. See docs/search.md.
   *
   * @throws io.lancecontext.core.error.SchemaException if the column is not a vector column or the query vector
   *     has another dimension
   * @throws io.lancecontext.core.error.SnapshotNotFoundException if the query names a snapshot no longer kept
   */
  public SearchResult search(VectorQuery query) {
    check();
    return new SearchResult(reads.search(query), store.codec());
  }

  /**
   * The {@code k} rows of the LSM view whose text column best matches the query's terms, best first, each with its
   * {@code _score}: every acknowledged add is searchable as soon as it returns, only a key's newest row can match,
   * deleted rows never do; a text without a term matches no row. See docs/search.md.
   *
   * @throws io.lancecontext.core.error.SchemaException if the column is not a string column
   * @throws IllegalArgumentException if the text is null
   * @throws io.lancecontext.core.error.SnapshotNotFoundException if the query names a snapshot no longer kept
   */
  public SearchResult search(TextQuery query) {
    check();
    return new SearchResult(reads.search(query), store.codec());
  }

  /**
   * Hybrid search: the {@code k} rows of the LSM view most relevant to both queries, most relevant first, each with
   * its {@code _relevance_score}: each query ranks its best rows (twice k, at least 20; its own filter first) and the
   * rankings are fused by reciprocal rank fusion. The columns are the vector query's (the text query's when it names
   * none). See docs/search.md.
   *
   * @throws IllegalArgumentException if the queries name different snapshots, or {@code k} is not 1 to
   *     {@link VectorQuery#MAX_K}
   */
  public SearchResult search(VectorQuery vector, TextQuery text, int k) {
    check();
    return new SearchResult(reads.search(vector, text, k), store.codec());
  }

  // ---------------------------------------------------------------- split reads (engines)

  /**
   * Splits a read into about {@code maxSplits} independent parts that return, together, exactly the LSM view
   * of one snapshot, each with a row and byte estimate (see {@link ReadPlan}). Engines read the parts in
   * parallel, in any process ({@link #read(ReadSplit)}, {@link ContextStore#openForSplit}). The scan may not have an
   * offset; a limit applies to each part. Expiry is judged at planning time.
   */
  public ReadPlan planRead(ScanSpec scan, int maxSplits) {
    return reads().planRead(scan, maxSplits);
  }

  /** Reads one part of a planned read (in this or any other process) with this handle's storage options. */
  public StoreReader read(ReadSplit split) {
    return reader(reads().read(split));
  }

  /**
   * Keeps {@code plan} readable until the lease is closed, and {@code read.lease-timeout} after that: garbage
   * collection, in any process, deletes nothing its splits read. For a plan used longer than {@code gc.grace}.
   */
  public ReadLease holdRead(ReadPlan plan) {
    return holdRead(plan.plannedAt());
  }

  /** As {@link #holdRead(ReadPlan)}, for every split planned at {@code plannedAt} or later. */
  public ReadLease holdRead(Instant plannedAt) {
    return reads().holdRead(plannedAt);
  }

  // ---------------------------------------------------------------- snapshots (docs/snapshots.md)

  /**
   * Takes a snapshot of the LSM view as it is now, readable by its token in any process for
   * {@code snapshot.retention}: such a read returns exactly the rows a read now would, whatever maintenance
   * runs meanwhile.
   */
  public StoreSnapshot snapshot() {
    return reads().snapshot();
  }

  /**
   * Takes a snapshot as {@link #snapshot()} does if the view changed since the snapshot {@code tokenOrTag} names
   * (a merge or a compaction counts); empty, writing nothing, if it did not.
   *
   * @throws io.lancecontext.core.error.SnapshotNotFoundException if that snapshot is not kept (any more)
   */
  public Optional<StoreSnapshot> snapshotIfChanged(String tokenOrTag) {
    return reads().snapshotIfChanged(tokenOrTag);
  }

  /**
   * Takes a snapshot of the LSM view as it is now and tags it {@code name}: readable by the tag or its token
   * until {@link #dropTag}.
   *
   * @throws IllegalArgumentException if {@code name} is not a tag name or the tag exists
   */
  public StoreSnapshot tag(String name) {
    return reads().tag(name);
  }

  /**
   * Tags the snapshot {@code snapshot} names (a token, or another tag) as {@code name}, if it is still kept.
   *
   * @throws io.lancecontext.core.error.SnapshotNotFoundException if it is not kept any more
   * @throws IllegalArgumentException if {@code name} is not a tag name or the tag exists
   */
  public StoreSnapshot tag(String name, String snapshot) {
    return reads().tag(name, snapshot);
  }

  /**
   * Drops the tag {@code name}; false if there is none. What only it kept is collected by a later
   * {@link ContextStore#gc()}.
   */
  public boolean dropTag(String name) {
    return reads().dropTag(name);
  }

  /** The store's tags. */
  public List<StoreSnapshot> tags() {
    return reads().tags();
  }
}
