package io.lancecontext.core.internal.store;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.OperationInterruptedException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.error.StoreNotFoundException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.KeyIndex;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates a store or opens an existing one, checking that it is a lancecontext store, that a requested
 * spec equals the stored one, and that the shard count matches. A store is created in steps (empty
 * dataset with the spec, shard count in the dataset config, MemWAL); a concurrent opener that finds
 * it half-created waits for it.
 */
final class StoreCreation {
  private static final Logger LOG = LoggerFactory.getLogger(StoreCreation.class);
  static final String SHARDS_CONFIG = "lancecontext.shards";
  /**
   * The object naming which store a location holds: a random id written once when the store is created,
   * before it is complete, so every complete store created since has one (older stores have none). A store
   * dropped and created again at the same location has another id, which is how a JVM that kept the old
   * one resident tells them apart.
   */
  static final String STORE_ID = "_lc/store-id";
  private static final int HALF_CREATED_RETRIES = 50;

  /** {@code storeId} is null for a store created before stores had ids. */
  record Opened(LanceDataset dataset, SchemaSpec spec, int shards, boolean created, String storeId) {}

  private StoreCreation() {}

  static Opened openOrCreate(StoreConfig config, StoreFiles files, BufferAllocator allocator) {
    String uri = config.uri();
    boolean exists = LanceErrors.call("look for a store at " + uri, () -> files.prefixExists("_versions/"));
    if (!exists) {
      Optional<SchemaSpec> requested = config.requestedSpec();
      if (requested.isEmpty()) {
        throw new StoreNotFoundException(uri + " (set option '" + StoreOptions.SCHEMA.key()
            + "' to a preset or a schema spec to create one)", null);
      }
      String id = UUID.randomUUID().toString();
      LanceDataset created = create(config, requested.get(), allocator, files, id);
      if (created != null) {
        return new Opened(created, requested.get(), config.shards(), true, id);
      }
      // somebody else created it first: open theirs below
    }
    for (int attempt = 0; ; attempt++) {
      LanceDataset ds = StoreDatasets.open(uri, config, allocator);
      try {
        Opened o = check(config, ds);
        if (o != null) {
          return new Opened(o.dataset(), o.spec(), o.shards(), false, storeId(files));
        }
      } catch (RuntimeException e) {
        ds.close();
        throw e;
      }
      ds.close();
      if (attempt >= HALF_CREATED_RETRIES) {
        throw new StoreNotFoundException(uri + " (a dataset exists but its creation as a lancecontext store never "
            + "completed)", null);
      }
      sleep(100);
    }
  }

  /** Null when the store is still being created by another process. */
  private static Opened check(StoreConfig config, LanceDataset ds) {
    String uri = config.uri();
    Optional<SchemaSpec> stored = SchemaSpec.fromArrowSchema(ds.schema());
    if (stored.isEmpty()) {
      throw new SchemaException("the Lance dataset at " + uri + " is not a lancecontext store (its schema carries no "
          + "lancecontext spec)");
    }
    Optional<SchemaSpec> requested = config.requestedSpec();
    if (requested.isPresent() && !requested.get().equals(stored.get())) {
      throw new SchemaException("the store at " + uri + " was created with another schema spec; omit option '"
          + StoreOptions.SCHEMA.key() + "' to use the stored one. Stored: " + stored.get().toJson() + " Requested: "
          + requested.get().toJson());
    }
    Map<String, String> cfg = ds.config();
    String shards = cfg.get(SHARDS_CONFIG);
    if (shards == null || !ds.hasMemWal()) {
      return null;
    }
    int n = Integer.parseInt(shards);
    if (config.isSet(StoreOptions.SHARDS) && config.shards() != n) {
      throw new BadOptionException(StoreOptions.SHARDS.key(), "the store at " + uri + " has " + n
          + " shards, fixed at creation; got " + config.shards());
    }
    return new Opened(ds, stored.get(), n, false, null);
  }

  /**
   * The id of the store at {@code files}' location now: null when it has none (created before stores had
   * ids, or dropped).
   */
  static String storeId(StoreFiles files) {
    return LanceErrors.call("read the store id", () -> files.readIfPresent(STORE_ID))
        .map(b -> new String(b, StandardCharsets.UTF_8)).orElse(null);
  }

  private static LanceDataset create(StoreConfig config, SchemaSpec spec, BufferAllocator allocator, StoreFiles files,
      String id) {
    io.lancecontext.core.internal.lance.StructNulls.checkStorable(spec);
    LanceDataset ds;
    try {
      ds = LanceDataset.create(config.uri(), spec.toArrowSchema(), config, allocator);
    } catch (RuntimeException e) {
      if (String.valueOf(e.getMessage()).toLowerCase().contains("already exists")) {
        return null;
      }
      throw e;
    }
    try {
      // before the shard count, which completes the store: whoever opens a complete store finds its id
      LanceErrors.run("write the store id", () -> files.overwrite(STORE_ID, id.getBytes(StandardCharsets.UTF_8)));
      ds.updateConfig(Map.of(SHARDS_CONFIG, Integer.toString(config.shards())));
      KeyIndex.ensure(ds, spec, config, false);
      ds.initializeMemWal();
      LOG.info("Created store {} ({} shards, spec {})", config.uri(), config.shards(),
          spec.preset().orElse("custom"));
    } catch (RuntimeException e) {
      throw LanceErrors.translate("initialize the store at " + config.uri(), e);
    } finally {
      ds.close();
    }
    // re-open through the one open path, so that the handle carries the JVM's session
    return StoreDatasets.open(config.uri(), config, allocator);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new OperationInterruptedException("interrupted while waiting for a store to be created", e);
    }
  }
}
