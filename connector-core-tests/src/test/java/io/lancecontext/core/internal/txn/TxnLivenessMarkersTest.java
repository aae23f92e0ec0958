package io.lancecontext.core.internal.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.internal.io.StoreFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A renewal never deletes the marker it replaces, only the one before that: garbage collection lists a
 * transaction's markers while renewals run, and a listing racing the move of a new marker and the delete of an
 * old one may see neither of those two. With the replaced marker deleted at once, such a listing found no marker
 * alive and the collection aborted a transaction its owner was renewing (a 1 s txn.timeout test failed so, in
 * core and in Spark, under a full suite).
 */
class TxnLivenessMarkersTest {
  @TempDir
  Path dir;

  @Test
  void aRenewalDeletesOnlyTheMarkerBeforeTheOneItReplaces() throws Exception {
    StoreFiles files = StoreFiles.forUri(dir.toString());
    TxnLiveness liveness = new TxnLiveness(files, dir.toString(), txid -> false);
    Duration timeout = Duration.ofMillis(40);
    liveness.renew("t", timeout);
    List<String> first = files.list(TxnIds.dir("t"));
    assertEquals(1, first.size(), first.toString());
    Thread.sleep(15);  // more than a quarter of the timeout: the next call renews
    liveness.renew("t", timeout);
    List<String> second = files.list(TxnIds.dir("t"));
    assertEquals(2, second.size(), "the first marker stays while the second is the newest: " + second);
    assertTrue(second.containsAll(first));
    Thread.sleep(15);
    liveness.renew("t", timeout);
    List<String> third = files.list(TxnIds.dir("t"));
    assertEquals(2, third.size(), third.toString());
    assertTrue(third.stream().noneMatch(first::contains), "the first marker went with the third renewal: " + third);
    assertTrue(third.containsAll(second.stream().filter(m -> !first.contains(m)).toList()));
  }
}
