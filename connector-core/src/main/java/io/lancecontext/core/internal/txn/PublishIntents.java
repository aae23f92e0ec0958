package io.lancecontext.core.internal.txn;

import io.lancecontext.core.error.WriteTimeoutException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceErrors;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes in flight, so that a merge never moves a bucket's transaction watermark past a publish whose record
 * is not written yet.
 *
 * <p>A publish takes its buckets' publish sequences and then writes its record. Readers treat a part at or below
 * its bucket's transaction watermark as merged, so a merge that took a later transaction of the bucket (another
 * process may claim the bucket and publish there meanwhile) and moved the watermark past the sequence of a
 * record written after the merge listed the transactions would hide that transaction's rows for good. So each
 * publish writes an <em>intent</em> ({@code _lc/txn-publishing/<txid>.<uuid>}: its start time and buckets) before
 * it takes a sequence, and deletes it after its record (and the publish marker) is written. A merge lists the
 * published transactions, then the intents, then the published transactions again, and leaves alone every bucket
 * a live intent names or whose published parts changed between the two listings ({@link
 * Transactions#publishing}): a record it did not list was either announced by an intent it saw, or written
 * before it looked again, or its sequence was taken after the merge listed the intents, and then it is above
 * every sequence the merge takes (a publish raises its sequence above every publish it can see).
 *
 * <p>An intent older than {@link #STALE} is a dead publisher's: merges ignore it and garbage collection deletes
 * it. A publish whose intent gets that old before its record is written fails instead of writing it.
 */
public final class PublishIntents {
  private static final Logger LOG = LoggerFactory.getLogger(PublishIntents.class);
  static final String DIR = "_lc/txn-publishing";
  /** How long an intent holds back merges of its buckets at most (a publisher that died in its publish). */
  public static final Duration STALE = Duration.ofMinutes(10);

  private final StoreFiles files;

  PublishIntents(StoreFiles files) {
    this.files = files;
  }

  /** An intent written; closing it deletes it. */
  public final class Intent implements AutoCloseable {
    private final String path;
    private final long startedNanos = System.nanoTime();

    private Intent(String path) {
      this.path = path;
    }

    /** Throws if this intent is old enough that a merge may already ignore it (its record must not be written). */
    public void requireFresh(String txid) {
      if (System.nanoTime() - startedNanos > STALE.toNanos() / 2) {
        throw new WriteTimeoutException("transaction " + txid + ": its publish took longer than " + STALE.dividedBy(2)
            + " between announcing itself and writing its record; nothing was published, publish it again");
      }
    }

    @Override
    public void close() {
      try {
        files.delete(path);
      } catch (IOException e) {
        // merges of its buckets wait until it is stale, and garbage collection deletes it then
        LOG.warn("could not delete the publish intent {} ({}); merges of its buckets wait up to {}", path, e, STALE);
      }
    }
  }

  /** Announces the publish of {@code txid} into {@code buckets}, before it takes their sequences. */
  public Intent begin(String txid, Collection<Integer> buckets) {
    String path = DIR + "/" + txid + "." + UUID.randomUUID();
    String content = System.currentTimeMillis() + " " + buckets.stream().map(String::valueOf)
        .collect(Collectors.joining(","));
    try {
      files.createIfAbsent(path, content.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw LanceErrors.translate("announce the publish of transaction " + txid, e);
    }
    return new Intent(path);
  }

  /** The buckets named by intents younger than {@link #STALE} at {@code nowMillis}. */
  Set<Integer> liveBuckets(long nowMillis) throws IOException {
    Set<Integer> out = new TreeSet<>();
    for (String name : files.list(DIR)) {
      String[] f = read(name);
      if (f != null && Long.parseLong(f[0]) > nowMillis - STALE.toMillis() && f.length > 1) {
        for (String b : f[1].split(",")) {
          out.add(Integer.parseInt(b));
        }
      }
    }
    return out;
  }

  /** Deletes the intents older than {@link #STALE} at {@code nowMillis}, checking {@code held} before each. */
  public int collectStale(long nowMillis, Runnable held) {
    try {
      int deleted = 0;
      for (String name : files.list(DIR)) {
        String[] f = read(name);
        if (f != null && Long.parseLong(f[0]) <= nowMillis - STALE.toMillis()) {
          held.run();
          files.delete(DIR + "/" + name);
          deleted++;
        }
      }
      return deleted;
    } catch (IOException e) {
      throw LanceErrors.translate("collect stale publish intents", e);
    }
  }

  /** An intent's fields ({@code <millis>} and {@code <buckets>}), or null if it is gone or not one of this build's. */
  private String[] read(String name) throws IOException {
    try {
      String[] f = new String(files.read(DIR + "/" + name), StandardCharsets.UTF_8).trim().split(" ");
      return f[0].matches("\\d{1,18}") && (f.length == 1 || f[1].matches("\\d+(,\\d+)*")) ? f : null;
    } catch (StoreFiles.NotFound e) {
      return null;  // its publish ended
    }
  }
}
