package io.lancecontext.core;

import static io.lancecontext.core.TransactionTest.row;
import static io.lancecontext.core.TransactionTest.transactionOptions;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.internal.store.StoreRegistry;
import io.lancecontext.core.internal.write.BucketWriter;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.StoreTest;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A process that will publish (a Flink committer) readies the store when it starts: every bucket's lanes are opened in
 * the background, so that its first publish does not open them; a writer of another process that held a lane claims
 * it back at its next put, and nothing is lost.
 */
class PublishPreparationTest extends StoreTest {
  @Test
  void aCommitterReadiesEveryBucketAndAnotherProcesssWriterClaimsItsLaneBack() throws Exception {
    StoreRegistry otherProcess = new StoreRegistry(8, Duration.ofMinutes(10));
    try (ContextStore committer = ContextStore.open(transactionOptions(dir));
        ContextStore writer = ContextStore.open(otherProcess, StoreConfig.of(transactionOptions(dir)))) {
      writer.add(List.of(row("w0", 1)));
      BucketWriter[] buckets = committer.resident().writers();
      assertFalse(Arrays.stream(buckets).anyMatch(BucketWriter::isOpen), "nothing opened before");

      committer.preparePublishing();
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (!Arrays.stream(buckets).allMatch(BucketWriter::isOpen) && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertTrue(Arrays.stream(buckets).allMatch(BucketWriter::isOpen), "every bucket's lanes opened in the background");

      writer.add(List.of(row("w1", 2), row("w0", 3)));  // claims the lanes the preparation claimed back
      WriteSummary staged = TransactionTest.stage(committer, "tx0", "a", 0, 20, 4);
      PublishResult r = committer.publish("tx0", List.of(staged));
      assertFalse(r.alreadyPublished());
      assertEquals(20, r.rows());
      for (ContextStore reader : List.of(committer, writer)) {
        assertEquals(3, reader.get("w0").orElseThrow().get("token_count"));
        assertEquals(2, reader.get("w1").orElseThrow().get("token_count"));
        assertEquals(4, reader.get("k19").orElseThrow().get("token_count"));
        assertEquals(22, reader.count());
      }
      writer.add(List.of(row("w2", 5)));  // and once more after the publish claimed every lane
      assertEquals(5, committer.get("w2").orElseThrow().get("token_count"));
    } finally {
      otherProcess.closeAll();
    }
  }

  @Test
  void aStoreClosedWhilePreparingClosesCleanlyAndAClosedHandleRefusesToPrepare() {
    ContextStore store = ContextStore.open(transactionOptions(dir));
    store.preparePublishing();
    ContextStore.closeAllResident();  // while the preparation runs, or before it started: the close waits or refuses it
    assertThrows(StoreClosedException.class, store::preparePublishing);
    store.close();
    try (ContextStore again = ContextStore.open(transactionOptions(dir))) {
      WriteSummary staged = TransactionTest.stage(again, "tx0", "a", 0, 5, 1);
      again.publish("tx0", List.of(staged));
      assertEquals(5, again.count());
    }
  }
}
