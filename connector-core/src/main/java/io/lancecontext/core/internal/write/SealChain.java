package io.lancecontext.core.internal.write;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The background seals of one bucket, run one after the other so that the generations of a bucket's lanes
 * are flushed (and so merged) in the order they were sealed.
 */
final class SealChain {
  /** Logs as the bucket writer it was part of, so that log settings naming {@code BucketWriter} keep applying. */
  private static final Logger LOG = LoggerFactory.getLogger(BucketWriter.class);

  private final BucketWriter.Host host;
  private final int bucket;
  private final ExecutorService sealers;
  private Future<Boolean> lastSeal;

  SealChain(BucketWriter.Host host, int bucket) {
    this.host = host;
    this.bucket = bucket;
    this.sealers = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "lancecontext-seal-" + host.name() + "-" + bucket);
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Runs {@code close} once the bucket's previous seal ended (or after {@code write.put-timeout}: a
   * close that hangs on a fenced writer must not stop every later seal). Called under the bucket lock.
   */
  Future<Boolean> chain(Callable<Boolean> close) {
    Future<Boolean> previous = lastSeal;
    long timeoutMillis = host.putTimeout().toMillis();
    lastSeal = sealers.submit(() -> {
      if (previous != null) {
        try {
          previous.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
          LOG.warn("{} bucket {}: the previous seal did not finish ({}); sealing anyway", host.name(), bucket, e.toString());
        }
      }
      return close.call();
    });
    return lastSeal;
  }

  void shutdown() {
    sealers.shutdown();
  }
}
