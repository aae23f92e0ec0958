package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.io.StoreFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * When files without a timestamp of their own became obsolete, as garbage collection first saw it
 * ({@value #PATH}, written by the lease holder only). Shard manifests and WAL entries carry no time and
 * their modification time says when they were written, not when they stopped being needed, so each
 * collection records, per shard, how far they were obsolete at that moment:
 *
 * <ul>
 *   <li>{@code wal <shard> <p> <millis>}: WAL entries at or below position {@code p} (the replay
 *       position: their rows were sealed into a generation) were obsolete at {@code millis};</li>
 *   <li>{@code manifest <shard> <v> <millis>}: manifest versions below {@code v} were superseded at
 *       {@code millis};</li>
 *   <li>{@code orphan <shard> <dir> <millis>}: the unlisted generation directory {@code dir} was
 *       orphaned at {@code millis}.</li>
 * </ul>
 *
 * A recorded time is never earlier than the real one, so a file is kept at least {@code gc.grace} after
 * it became obsolete (and at most one collection interval longer).
 */
final class GcLedger {
  static final String PATH = "_lc/gc-ledger";

  /** One bound: everything at or below (WAL) or below (manifests) {@code bound} was obsolete at {@code millis}. */
  record Mark(long bound, long millis) {}

  private final Map<String, List<Mark>> marks = new HashMap<>();
  private final Map<String, Long> orphans = new HashMap<>();

  static GcLedger read(StoreFiles files) throws IOException {
    GcLedger ledger = new GcLedger();
    java.util.Optional<byte[]> content = files.readIfPresent(PATH);
    if (content.isEmpty()) {
      return ledger;
    }
    for (String line : new String(content.get(), StandardCharsets.UTF_8).split("\n")) {
      String[] p = line.trim().split(" ");
      if (p.length != 4) {
        continue;
      }
      try {
        switch (p[0]) {
          case "wal", "manifest" -> ledger.marks.computeIfAbsent(p[0] + " " + p[1], k -> new ArrayList<>())
              .add(new Mark(Long.parseLong(p[2]), Long.parseLong(p[3])));
          case "orphan" -> ledger.orphans.put(p[1] + " " + p[2], Long.parseLong(p[3]));
          default -> {
            // a kind this version does not know
          }
        }
      } catch (NumberFormatException e) {
        // a damaged line only makes collection later, never earlier
      }
    }
    return ledger;
  }

  /** Records that WAL entries of {@code shard} at or below {@code position} are obsolete as of {@code now}. */
  void walObsolete(String shard, long position, long now) {
    record("wal " + shard, position, now);
  }

  /** Records that manifest versions of {@code shard} below {@code version} are superseded as of {@code now}. */
  void manifestsSuperseded(String shard, long version, long now) {
    record("manifest " + shard, version, now);
  }

  private void record(String key, long bound, long now) {
    List<Mark> list = marks.computeIfAbsent(key, k -> new ArrayList<>());
    long highest = list.stream().mapToLong(Mark::bound).max().orElse(0);
    if (bound > highest) {
      list.add(new Mark(bound, now));
    }
  }

  /** When WAL entry {@code position} became obsolete, or -1 if it is not known to be. */
  long walObsoleteSince(String shard, long position) {
    return earliest("wal " + shard, position, true);
  }

  /** When manifest {@code version} was superseded, or -1 if it is not known to be. */
  long manifestSupersededSince(String shard, long version) {
    return earliest("manifest " + shard, version, false);
  }

  private long earliest(String key, long n, boolean inclusive) {
    long since = -1;
    for (Mark m : marks.getOrDefault(key, List.of())) {
      if (inclusive ? m.bound() >= n : m.bound() > n) {
        since = since < 0 ? m.millis() : Math.min(since, m.millis());
      }
    }
    return since;
  }

  /** When the generation directory {@code dir} of {@code shard} was first seen orphaned (recording {@code now} if never). */
  long orphanedSince(String shard, String dir, long now) {
    return orphans.computeIfAbsent(shard + " " + dir, k -> now);
  }

  /**
   * Drops what no longer decides anything: of the marks older than {@code cutoff}, all but the one
   * with the highest bound (everything below it is collectable), and orphans not in {@code present}.
   */
  void prune(long cutoff, Set<String> presentOrphans) {
    for (List<Mark> list : marks.values()) {
      Mark oldest = null;
      for (Mark m : list) {
        if (m.millis() <= cutoff && (oldest == null || m.bound() > oldest.bound())) {
          oldest = m;
        }
      }
      Mark keep = oldest;
      list.removeIf(m -> m.millis() <= cutoff && m != keep);
    }
    orphans.keySet().retainAll(presentOrphans);
  }

  void write(StoreFiles files) throws IOException {
    StringBuilder sb = new StringBuilder();
    marks.forEach((key, list) -> list.forEach(m -> sb.append(key).append(' ').append(m.bound()).append(' ')
        .append(m.millis()).append('\n')));
    orphans.forEach((key, millis) -> sb.append("orphan ").append(key).append(' ').append(millis).append('\n'));
    files.overwrite(PATH, sb.toString().getBytes(StandardCharsets.UTF_8));
  }
}
