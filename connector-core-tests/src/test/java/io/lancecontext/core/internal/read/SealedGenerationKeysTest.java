package io.lancecontext.core.internal.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.internal.txn.StagedKeys;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.testing.StoreTest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * A reader that holds the WAL entries a generation was sealed from indexes the generation from them (keys, write
 * sequences, tombstones) instead of reading its key columns, and gets what reading them gives; entries that do not
 * match the generation (here: in the wrong order) are not used.
 */
class SealedGenerationKeysTest extends StoreTest {

  @Test
  void aGenerationSealedFromEntriesAReaderHoldsIsIndexedFromThemAndReadsAsItsFile() throws Exception {
    Map<String, String> options = new HashMap<>(Map.of("path", dir.resolve("sealed").toString(), "schema", "context",
        "schema.embedding-dim", "4", "shards", "1", "gc.grace", "0s"));
    try (ContextStore store = ContextStore.open(options)) {
      add(store, 0, 100, 1);
      // sealed now: a key written again while its generation is open would seal it in the background (a lane
      // switch), racing the reads below
      store.seal();
      add(store, 5, 15, 2);  // newer rows of keys the first add wrote
      store.delete(List.of("k20", "k21"));
      add(store, 200, 250, 3);
      StoreFiles files = StoreFiles.forUri(store.uri());
      // the entries the seal below seals, by lane
      Map<String, List<Long>> sealedPositions = new HashMap<>();
      for (String shard : ShardIds.forBucket(0)) {
        long replayAfter = ShardManifests.latest(files, shard).replayAfter();
        sealedPositions.put(shard, WalEntry.positions(files, shard).stream().filter(p -> p > replayAfter).toList());
      }
      options.remove("schema");
      StoreConfig config = StoreConfig.of(options);
      try (RootAllocator allocator = new RootAllocator()) {
        FreshCache warm = new FreshCache(config, store.spec(), files, allocator, new StagedKeys(), null);
        for (String shard : ShardIds.forBucket(0)) {
          warm.view(shard, 0).release();  // holds the WAL entries
        }
        store.seal();  // gc.grace 0: the readers look for a new manifest on every view
        FreshCache cold = new FreshCache(config, store.spec(), files, allocator, new StagedKeys(), null);
        java.util.Set<String> keys = new java.util.HashSet<>();
        for (String shard : ShardIds.forBucket(0)) {
          FreshShard fromWal = warm.view(shard, 0);
          FreshShard fromFile = cold.view(shard, 0);
          assertEquals(fromFile.newest(), fromWal.newest(), "every key's newest row, sequence and tombstone alike");
          keys.addAll(fromWal.newest().keySet());
          fromWal.release();
          fromFile.release();
        }
        assertEquals(0, cold.generationsFromWal(), "a reader without the entries reads the generations");
        long lanesSealed = sealedPositions.values().stream().filter(p -> !p.isEmpty()).count();
        assertTrue(lanesSealed >= 1, "the seal sealed entries: " + sealedPositions);
        assertEquals(lanesSealed, warm.generationsFromWal(), "each lane's sealed generation was indexed from the entries "
            + "held: " + sealedPositions);
        assertEquals(150, keys.size(), "k0..k99 (k20 and k21 as tombstones) and k200..k249 in the lanes' views");

        // entries handed over in another order than the generation's rows are refused by the sample check
        String shard = sealedPositions.entrySet().stream().filter(e -> e.getValue().size() >= 2).findFirst()
            .orElseThrow(() -> new AssertionError("no lane sealed two entries: " + sealedPositions)).getKey();
        ShardManifest manifest = ShardManifests.latest(files, shard);
        ShardManifest.FlushedGeneration g = manifest.flushed().get(manifest.flushed().size() - 1);
        FreshLoader loader = new FreshLoader(config, store.spec(), files, allocator, new StagedKeys(), null);
        List<WalSource> reversed = new ArrayList<>();
        for (long p : sealedPositions.get(shard)) {
          reversed.add(WalSource.load(store.uri(), files, shard, p, allocator));
        }
        Collections.reverse(reversed);
        GenerationSource read = loader.generation(shard, g, null);
        GenerationSource refused = loader.generation(shard, g, reversed);
        assertEquals(0, loader.generationsFromWal(), "reversed entries were not used");
        assertEquals(List.of(read.keys()), List.of(refused.keys()));
        List<String> walOrder = new ArrayList<>();
        for (WalSource w : reversed) {
          for (var batch : w.entry().batches()) {
            var key = FreshShard.keyVector(batch);
            for (int r = 0; r < batch.getRowCount(); r++) {
              walOrder.add(new String(key.get(r), java.nio.charset.StandardCharsets.UTF_8));
            }
          }
        }
        assertNotEquals(List.of(read.keys()), walOrder, "the reversed entries' keys differ in order");
        read.release();
        refused.release();
        reversed.forEach(FreshSource::release);
        warm.close();
        cold.close();
      }
    }
  }

  private static void add(ContextStore store, int from, int to, int value) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      rows.add(Map.of("id", "k" + i, "token_count", value));
    }
    store.add(rows);
  }

  private static String shardWithWal(StoreFiles files) throws IOException {
    for (String shard : ShardIds.forBucket(0)) {
      if (!files.list(ShardLayout.walDir(shard)).isEmpty()) {
        return shard;
      }
    }
    throw new AssertionError("no WAL entry");
  }
}
