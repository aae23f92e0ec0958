package io.lancecontext.core.internal.txn;

/**
 * One visible staged part of a published transaction, as the fresh tier and the merge read it: every
 * row reads as write sequence {@code sequence}; of parts with equal sequences (one transaction) the later
 * in {@code order} wins a key.
 *
 * @param path the part's dataset, relative to the store root
 * @param order the part's place in its transaction's tie order (see {@link TxnRecord#ORDER})
 */
public record PublishedPart(String txid, int bucket, String name, String path, long sequence, int order,
    long rows) {

  /** Fresh-tier and merge order within a bucket: by sequence, then tie order. */
  public static final java.util.Comparator<PublishedPart> ORDER = java.util.Comparator
      .comparingLong(PublishedPart::sequence).thenComparingInt(PublishedPart::order);

  /** Stable identity (cache key). */
  public String id() {
    return "txn:" + path;
  }
}
