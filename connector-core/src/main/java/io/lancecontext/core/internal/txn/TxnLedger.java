package io.lancecontext.core.internal.txn;

import io.lancecontext.core.internal.io.StoreFiles;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.InflaterInputStream;

/**
 * The compact ledger of published transactions whose records garbage collection removed: for each, its
 * id, publish time and per-bucket publish sequences (not its parts: they were merged and deleted).
 *
 * <p>Layout: numbered versions {@code _lc/txn-ledger/<20-digit n>}, each created once (put-if-absent) by the
 * maintenance lease holder and holding every entry of version {@code n - 1} plus the ones it adds, so the
 * newest version alone is the whole ledger and a version is never changed once written. A record is deleted
 * only after a version holding it exists, so for every compacted transaction either its record or the newest
 * ledger version names it, at every moment and in every process. Superseded versions are deleted by a later
 * collection; a reader that finds the version it listed gone lists again.
 *
 * <p>Form: magic, version, deflated payload (written-at millis, entry count, then per entry: txid, publish
 * millis, bucket → sequence pairs). Entries are about 10–30 bytes deflated for generated ids
 * ({@code flink-<sink>-<job>-<n>}).
 */
public final class TxnLedger {
  /** Where the versions are; outside {@link TxnIds#ROOT}, so that listing transactions never lists them. */
  public static final String DIR = "_lc/txn-ledger";
  private static final int MAGIC = 0x4C43544C;  // "LCTL"
  private static final byte FORMAT = 1;

  /** One version of the ledger: its number (0: none written yet) and its entries by transaction id. */
  public record Version(long number, Map<String, TxnRecord> entries) {
    public Version {
      entries = Map.copyOf(entries);
    }

    static final Version NONE = new Version(0, Map.of());
  }

  private TxnLedger() {}

  public static String path(long number) {
    return DIR + "/" + String.format("%020d", number);
  }

  /** The version numbers stored, ascending. */
  public static List<Long> numbers(StoreFiles files) throws IOException {
    List<Long> out = new ArrayList<>();
    for (StoreFiles.Entry e : files.listPrefix(DIR + "/")) {
      String n = e.name();
      if (n.length() == 20 && n.chars().allMatch(Character::isDigit) && e.path().equals(path(Long.parseLong(n)))) {
        out.add(Long.parseLong(n));
      }
    }
    out.sort(null);
    return out;
  }

  /**
   * The newest version (listing, then reading it; when a collection removed it in between, listing again).
   *
   * @throws IOException if it cannot be read, or keeps disappearing under a collection
   */
  public static Version newest(StoreFiles files) throws IOException {
    for (int attempt = 0; ; attempt++) {
      List<Long> numbers = numbers(files);
      if (numbers.isEmpty()) {
        return Version.NONE;
      }
      long n = numbers.get(numbers.size() - 1);
      try {
        return new Version(n, decode(files.read(path(n))));
      } catch (StoreFiles.NotFound e) {
        if (attempt >= 4) {
          throw e;
        }
      }
    }
  }

  /**
   * Writes version {@code previous.number() + 1}: {@code previous}'s entries and {@code added} (published
   * records).
   *
   * @return the version written, or empty if that version exists already (another collector wrote it)
   */
  public static java.util.Optional<Version> append(StoreFiles files, Version previous, Collection<TxnRecord> added,
      long nowMillis) throws IOException {
    Map<String, TxnRecord> all = new TreeMap<>(previous.entries());
    for (TxnRecord r : added) {
      if (!r.published()) {
        throw new IllegalArgumentException("only published transactions are compacted: " + r.txid());
      }
      all.put(r.txid(), new TxnRecord(r.txid(), true, r.atMillis(), r.sequences(), List.of()));
    }
    long n = previous.number() + 1;
    if (!files.createIfAbsent(path(n), encode(all.values(), nowMillis))) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(new Version(n, all));
  }

  static byte[] encode(Collection<TxnRecord> entries, long nowMillis) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream head = new DataOutputStream(bytes)) {
      head.writeInt(MAGIC);
      head.writeByte(FORMAT);
      try (DataOutputStream out = new DataOutputStream(new DeflaterOutputStream(head))) {
        out.writeLong(nowMillis);
        out.writeInt(entries.size());
        for (TxnRecord r : entries) {
          out.writeUTF(r.txid());
          out.writeLong(r.atMillis());
          out.writeInt(r.sequences().size());
          for (var e : new TreeMap<>(r.sequences()).entrySet()) {
            out.writeInt(e.getKey());
            out.writeLong(e.getValue());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /** @throws IOException if the bytes are not a whole ledger version */
  static Map<String, TxnRecord> decode(byte[] bytes) throws IOException {
    try (DataInputStream head = new DataInputStream(new ByteArrayInputStream(bytes))) {
      if (head.readInt() != MAGIC || head.readByte() != FORMAT) {
        throw new IOException("not a transaction ledger");
      }
      try (DataInputStream in = new DataInputStream(new InflaterInputStream(head))) {
        in.readLong();
        int n = in.readInt();
        Map<String, TxnRecord> out = new TreeMap<>();
        for (int i = 0; i < n; i++) {
          String txid = in.readUTF();
          long at = in.readLong();
          int m = in.readInt();
          Map<Integer, Long> seqs = new TreeMap<>();
          for (int j = 0; j < m; j++) {
            seqs.put(in.readInt(), in.readLong());
          }
          out.put(txid, new TxnRecord(txid, true, at, seqs, List.of()));
        }
        return out;
      }
    } catch (java.io.EOFException | java.util.zip.ZipException e) {
      throw new IOException("a truncated or damaged transaction ledger", e);
    }
  }
}
