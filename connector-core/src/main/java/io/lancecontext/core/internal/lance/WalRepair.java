package io.lancecontext.core.internal.lance;

import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.io.StoreFiles;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a shard openable after a writer died while writing a WAL entry. lance-core 7.0.0 replays the
 * unsealed WAL tail when a {@code ShardWriter} opens and fails the open on an entry it cannot read
 * ("failed to read WAL IPC stream batch" for a truncated file, "Expected schema message, found empty
 * stream" for an empty one), after it has already claimed the shard; the shard then cannot be written
 * again. Such an entry was never acknowledged (a durable put returns only once its entry is whole), so
 * before a writer opens the shard, an incomplete newest entry of the tail is moved aside to
 * {@code _lc/quarantine/<shard>/}. An incomplete entry followed by complete ones means acknowledged rows
 * were damaged later: that is refused, not repaired.
 */
public final class WalRepair {
  private static final Logger LOG = LoggerFactory.getLogger(WalRepair.class);
  static final String QUARANTINE_DIR = "_lc/quarantine";

  private WalRepair() {}

  /**
   * Moves an incomplete newest entry of the shard's unsealed tail aside; does nothing when the tail
   * reads completely (the normal case: one manifest read and one directory listing).
   *
   * @return the quarantine path of the entry moved aside, or null
   * @throws StorageException if an incomplete entry has complete successors (acknowledged rows lost), or
   *     on an I/O failure
   */
  public static String beforeOpen(StoreFiles files, String shardId, BufferAllocator allocator, String label) {
    try {
      ShardManifest manifest = ShardManifests.latest(files, shardId);
      List<Long> tail = WalEntry.positions(files, shardId).stream().filter(p -> p > manifest.replayAfter()).toList();
      for (int i = 0; i < tail.size(); i++) {
        long position = tail.get(i);
        String path = WalEntry.path(shardId, position);
        byte[] content;
        try {
          content = files.read(path);
        } catch (StoreFiles.NotFound e) {
          continue;
        }
        if (WalEntry.isComplete(shardId, position, content, allocator)) {
          continue;
        }
        if (i < tail.size() - 1) {
          throw new StorageException(label + ": WAL entry " + path + " cannot be read completely but later entries "
              + "exist: acknowledged rows of that entry are lost (restore the file from a copy, or move it aside to "
              + "accept the loss)", null);
        }
        return moveAside(files, shardId, path, content, label);
      }
      return null;
    } catch (IOException e) {
      throw new StorageException(label + ": checking the WAL tail of shard " + shardId + " before opening it", e);
    }
  }

  /**
   * Copies the entry into the quarantine, then deletes it if it still holds what was judged incomplete
   * (a writer that claimed the shard meanwhile may have repaired it and written a whole entry there).
   */
  private static String moveAside(StoreFiles files, String shardId, String path, byte[] content, String label)
      throws IOException {
    String name = path.substring(path.lastIndexOf('/') + 1);
    String target = QUARANTINE_DIR + "/" + shardId + "/" + name + "." + System.currentTimeMillis() + "."
        + ProcessHandle.current().pid();
    files.createIfAbsent(target, content);
    byte[] now;
    try {
      now = files.read(path);
    } catch (StoreFiles.NotFound e) {
      return target;  // another process moved it aside
    }
    if (!Arrays.equals(now, content)) {
      files.delete(target);
      return null;
    }
    files.delete(path);
    LOG.warn("{}: moved the incomplete WAL entry {} ({} bytes; no put acknowledged it) aside to {} so that the "
        + "shard can be opened", label, path, content.length, target);
    return target;
  }
}
