package io.lancecontext.core.internal.write;

/**
 * Where an acknowledged put went: the MemWAL shard (bucket and lane), the epoch its writer held the
 * shard with, and the position of the WAL entry that holds the rows. Callers whose rows shared one put
 * (group commit) get the same receipt.
 */
public record PutReceipt(int bucket, int lane, String shardId, long epoch, long walPosition) {}
