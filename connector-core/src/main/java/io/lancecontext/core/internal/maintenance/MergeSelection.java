package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.MergedWatermarks;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.internal.txn.PublishedPart;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Chooses what one merge takes: the generations above each shard's merged watermark and the published,
 * unmerged transaction parts, whole buckets in bucket order from a bucket that turns with the base
 * version, while they fit {@code merge.max-bytes} and {@code merge.max-inputs}; a bucket that does not fit
 * is taken as a prefix in write-sequence order ({@link #sequencePrefix}) when nothing was taken before it.
 * A bucket whose WAL tail holds a row stamped below one of its parts' publish sequence is left for later.
 */
final class MergeSelection {
  private MergeSelection() {}

  /** A generation ({@code sequence} -1) or a published part (its publish sequence) a merge may take. */
  private record Candidate(String shardId, long generation, String path, long bytes, long sequence) {}

  /** What was chosen: inputs taken per shard, and the inputs left for the next merge. */
  record Chosen(Map<String, Integer> perShard, int remaining) {}

  /**
   * Opens the inputs the merge takes, adding each to {@code inputs} as it is opened (the caller closes
   * them, also when this fails): a bucket's generations, lane by lane in generation order, then its parts
   * in publish order. A {@code busy} bucket (a transaction is being published into it) is left for later.
   */
  static Chosen choose(StoreConfig config, int shards, StoreFiles files, BufferAllocator allocator, LanceDataset base,
      Map<Integer, List<PublishedPart>> published, java.util.Set<Integer> busy, long maxBytes, int maxInputs,
      List<MergeInput> inputs)
      throws IOException {
    Map<String, Long> watermarks = MergedWatermarks.read(base);
    Map<String, Integer> perShard = new LinkedHashMap<>();
    long bytes = 0;
    int remaining = 0;
    boolean full = false;
    // the first bucket turns with the base version, so that one bucket with more than a merge's bounds
    // of unmerged data does not hold the others back
    int first = (int) Math.floorMod(base.version(), (long) shards);
    for (int k = 0; k < shards; k++) {
      int bucket = (first + k) % shards;
      List<Candidate> candidates = new ArrayList<>();
      long txnWatermark = watermarks.getOrDefault(TxnIds.txnShardId(bucket), 0L);
      List<PublishedPart> parts = published.getOrDefault(bucket, List.of()).stream()
          .filter(p -> p.sequence() > txnWatermark).toList();
      long lowestTail = Long.MAX_VALUE;
      for (String shardId : ShardIds.forBucket(bucket)) {
        long w = watermarks.getOrDefault(shardId, 0L);
        ShardManifest manifest = ShardManifests.latest(files, shardId);
        for (ShardManifest.FlushedGeneration g : manifest.flushed()) {
          if (g.generation() > w) {
            candidates.add(new Candidate(shardId, g.generation(), g.path(),
                files.totalBytes(ShardLayout.generationDir(shardId, g.path())), -1));
          }
        }
        if (!parts.isEmpty()) {
          lowestTail = Math.min(lowestTail, lowestTailSequence(files, shardId, manifest.replayAfter(), allocator));
        }
      }
      String txnShard = TxnIds.txnShardId(bucket);
      for (PublishedPart p : parts) {
        candidates.add(new Candidate(txnShard, p.sequence(), p.path(), files.totalBytes(p.path()), p.sequence()));
      }
      if (candidates.isEmpty()) {
        continue;
      }
      if (full || busy.contains(bucket)) {
        remaining += candidates.size();
        continue;
      }
      long bucketBytes = candidates.stream().mapToLong(Candidate::bytes).sum();
      List<Candidate> taken = candidates;
      if (bytes + bucketBytes > maxBytes || inputs.size() + candidates.size() > maxInputs) {
        if (!inputs.isEmpty()) {
          remaining += candidates.size();
          continue;
        }
        taken = sequencePrefix(config, allocator, candidates, maxBytes, maxInputs);
        full = true;
      }
      long highestPart = taken.stream().mapToLong(Candidate::sequence).max().orElse(-1);
      if (highestPart >= 0 && lowestTail < highestPart) {
        remaining += candidates.size();  // sealed later (age, idle, flush), then merged
        continue;
      }
      remaining += candidates.size() - taken.size();
      java.util.Set<Candidate> chosen = new java.util.HashSet<>(taken);
      List<Candidate> ordered = new ArrayList<>(candidates.stream().filter(chosen::contains).toList());
      ordered.sort(java.util.Comparator.comparing((Candidate c) -> c.sequence() >= 0)
          .thenComparing(c -> c.sequence() >= 0 ? "" : c.shardId())
          .thenComparingLong(c -> c.sequence() >= 0 ? 0 : c.generation()));  // stable: parts keep their order
      for (Candidate c : ordered) {
        bytes += c.bytes();
        if (c.sequence() >= 0) {
          continue;
        }
        String uri = config.uri() + "/" + ShardLayout.generationDir(c.shardId(), c.path());
        inputs.add(new MergeInput(c.shardId(), c.generation(), c.path(), StoreDatasets.open(uri, config, allocator)));
        perShard.merge(c.shardId(), 1, Integer::sum);
      }
      for (Candidate c : ordered) {
        if (c.sequence() >= 0) {
          inputs.add(new MergeInput(c.shardId(), c.sequence(), c.path(),
              StoreDatasets.open(config.uri() + "/" + c.path(), config, allocator), c.sequence()));
          perShard.merge(c.shardId(), 1, Integer::sum);
        }
      }
    }
    return new Chosen(perShard, remaining);
  }

  /**
   * The inputs of one bucket a merge under {@code maxBytes} and {@code maxInputs} takes when the whole
   * bucket does not fit: a prefix in write-sequence order, at least one input, closed so that every input
   * left behind holds only rows newer than every row taken (the fresh tier wins over the base, so an older
   * row of a key must never stay unmerged above a newer one merged), which also keeps each lane's merged
   * generations a prefix of its generations and a transaction's parts of one bucket together.
   */
  private static List<Candidate> sequencePrefix(StoreConfig config, BufferAllocator allocator,
      List<Candidate> candidates, long maxBytes, int maxInputs) throws IOException {
    record Ranged(Candidate c, long min, long max) {}
    List<Ranged> ranged = new ArrayList<>();
    for (Candidate c : candidates) {
      if (c.sequence() >= 0) {
        ranged.add(new Ranged(c, c.sequence(), c.sequence()));
      } else {
        long[] range = sequenceRange(config, allocator, c);
        ranged.add(new Ranged(c, range[0], range[1]));
      }
    }
    ranged.sort(java.util.Comparator.comparingLong(Ranged::min).thenComparingLong(Ranged::max)
        .thenComparing(r -> r.c().shardId()).thenComparingLong(r -> r.c().generation()));
    List<Ranged> taken = new ArrayList<>();
    long bytes = 0;
    int i = 0;
    for (; i < ranged.size(); i++) {
      Ranged r = ranged.get(i);
      if (!taken.isEmpty() && (bytes + r.c().bytes() > maxBytes || taken.size() >= maxInputs)) {
        break;
      }
      taken.add(r);
      bytes += r.c().bytes();
    }
    List<Ranged> left = new ArrayList<>(ranged.subList(i, ranged.size()));
    boolean grew = true;
    while (grew) {
      grew = false;
      long highest = taken.stream().mapToLong(Ranged::max).max().orElse(Long.MIN_VALUE);
      Map<String, Long> laneTop = new HashMap<>();
      for (Ranged r : taken) {
        if (r.c().sequence() < 0) {
          laneTop.merge(r.c().shardId(), r.c().generation(), Math::max);
        }
      }
      for (var it = left.iterator(); it.hasNext(); ) {
        Ranged r = it.next();
        Long top = r.c().sequence() < 0 ? laneTop.get(r.c().shardId()) : null;
        if (r.min() <= highest || (top != null && r.c().generation() < top)) {
          taken.add(r);
          it.remove();
          grew = true;
        }
      }
    }
    return taken.stream().map(Ranged::c).toList();
  }

  /** The lowest and highest write sequence of a generation's rows (a missing stamp reads as 0). */
  private static long[] sequenceRange(StoreConfig config, BufferAllocator allocator, Candidate c) {
    String uri = config.uri() + "/" + ShardLayout.generationDir(c.shardId(), c.path());
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    try (LanceDataset ds = StoreDatasets.open(uri, config, allocator);
        ScanHandle scan = ds.scan(ScanRequest.of(List.of(SystemColumns.SEQUENCE)))) {
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        BigIntVector seq = (BigIntVector) reader.getVectorSchemaRoot().getVector(SystemColumns.SEQUENCE);
        for (int r = 0; r < seq.getValueCount(); r++) {
          long q = seq.isNull(r) ? 0L : seq.get(r);
          min = Math.min(min, q);
          max = Math.max(max, q);
        }
      }
    } catch (Exception e) {
      throw LanceErrors.translate("read the write sequences of generation " + c.path(), e);
    }
    return min == Long.MAX_VALUE ? new long[] {0, 0} : new long[] {min, max};
  }


  /**
   * The lowest write sequence of a row in a shard's WAL entries above {@code replayAfter} (its unsealed
   * tail); {@code Long.MAX_VALUE} if there is none. An incomplete entry was never acknowledged and counts
   * for nothing.
   */
  private static long lowestTailSequence(StoreFiles files, String shardId, long replayAfter, BufferAllocator allocator)
      throws IOException {
    long lowest = Long.MAX_VALUE;
    for (long p : WalEntry.positions(files, shardId)) {
      if (p <= replayAfter) {
        continue;
      }
      try (WalEntry e = WalEntry.read(files, shardId, p, allocator)) {
        for (VectorSchemaRoot b : e.batches()) {
          BigIntVector seq = (BigIntVector) b.getVector(SystemColumns.SEQUENCE);
          for (int i = 0; seq != null && i < b.getRowCount(); i++) {
            if (!seq.isNull(i)) {
              lowest = Math.min(lowest, seq.get(i));
            }
          }
        }
      } catch (WalEntry.Incomplete | io.lancecontext.core.internal.io.StoreFiles.NotFound e) {
        // never acknowledged, or sealed and collected since the listing
      }
    }
    return lowest;
  }
}
