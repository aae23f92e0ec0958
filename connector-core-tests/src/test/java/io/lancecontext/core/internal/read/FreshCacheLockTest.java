package io.lancecontext.core.internal.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.txn.StagedKeys;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.testing.StoreTest;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/** The fresh tier loads per shard: file I/O of one shard never holds up a read of another. */
class FreshCacheLockTest extends StoreTest {

  @Test
  void aShardWhoseFilesAreSlowDoesNotBlockAViewOfAnotherShard() throws Exception {
    Map<String, String> options = new HashMap<>(Map.of("path", dir.resolve("locks").toString(), "schema", "context",
        "schema.embedding-dim", "4", "shards", "2"));
    String slowShard;
    String fastShard;
    try (ContextStore store = ContextStore.open(options)) {
      String a = keyOfBucket(store, 0);
      String b = keyOfBucket(store, 1);
      store.add(List.of(Map.of("id", a, "token_count", 1), Map.of("id", b, "token_count", 2)));
      StoreFiles files = StoreFiles.forUri(store.uri());
      slowShard = shardWithWal(files, 0);
      fastShard = shardWithWal(files, 1);
      options.remove("schema");
      StoreConfig config = StoreConfig.of(options);
      CountDownLatch entered = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      StoreFiles slow = new Delaying(files, ShardLayout.walDir(slowShard) + "/", entered, release);
      try (RootAllocator allocator = new RootAllocator()) {
        FreshCache cache = new FreshCache(config, store.spec(), slow, allocator, new StagedKeys(), null);
        CompletableFuture<FreshShard> slowView = CompletableFuture.supplyAsync(() -> cache.view(slowShard, 0));
        try {
          assertTrue(entered.await(60, TimeUnit.SECONDS), "the slow shard's WAL entry is being read");
          FreshShard fast = CompletableFuture.supplyAsync(() -> cache.view(fastShard, 0)).get(60, TimeUnit.SECONDS);
          assertEquals(1, fast.newest().size(), "the other shard's view, while the slow one still reads");
          assertFalse(slowView.isDone(), "the slow read is still in its file I/O");
          fast.release();
        } finally {
          release.countDown();
        }
        FreshShard slowResult = slowView.get(60, TimeUnit.SECONDS);
        assertEquals(List.of(a), List.copyOf(slowResult.newest().keySet()));
        slowResult.release();
        cache.close();
      }
    }
  }

  private static String keyOfBucket(ContextStore store, int bucket) {
    for (int i = 0; ; i++) {
      if (store.bucketOf("key" + i) == bucket) {
        return "key" + i;
      }
    }
  }

  private static String shardWithWal(StoreFiles files, int bucket) throws IOException {
    for (String shard : ShardIds.forBucket(bucket)) {
      if (!files.list(ShardLayout.walDir(shard)).isEmpty()) {
        return shard;
      }
    }
    throw new AssertionError("bucket " + bucket + " has no WAL entry");
  }

  /** Real store files whose reads under one directory wait until released. */
  private record Delaying(StoreFiles files, String slowPrefix, CountDownLatch entered, CountDownLatch release)
      implements StoreFiles {
    @Override
    public byte[] read(String path) throws IOException {
      if (path.startsWith(slowPrefix)) {
        entered.countDown();
        try {
          release.await(120, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return files.read(path);
    }

    @Override
    public byte[] readRange(String path, long offset, int length) throws IOException {
      return files.readRange(path, offset, length);
    }

    @Override
    public java.util.Optional<Entry> stat(String path) throws IOException {
      return files.stat(path);
    }

    @Override
    public boolean prefixExists(String prefix) throws IOException {
      return files.prefixExists(prefix);
    }

    @Override
    public List<Entry> listPrefix(String prefix) throws IOException {
      return files.listPrefix(prefix);
    }

    @Override
    public List<String> list(String dir) throws IOException {
      return files.list(dir);
    }

    @Override
    public boolean createIfAbsent(String path, byte[] content) throws IOException {
      return files.createIfAbsent(path, content);
    }

    @Override
    public void overwrite(String path, byte[] content) throws IOException {
      files.overwrite(path, content);
    }

    @Override
    public void copy(String from, String to) throws IOException {
      files.copy(from, to);
    }

    @Override
    public void delete(String path) throws IOException {
      files.delete(path);
    }

    @Override
    public int deletePrefix(String prefix) throws IOException {
      return files.deletePrefix(prefix);
    }
  }
}
