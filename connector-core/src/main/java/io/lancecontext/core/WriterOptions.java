package io.lancecontext.core;

import io.lancecontext.core.internal.txn.TxnIds;
import java.util.Objects;
import java.util.Optional;

/**
 * How a write handle ({@link ContextStore#newWriter(WriterOptions)}) is made: the seed of the keys it
 * gives rows written without one, and its commit mode. Immutable; build with {@link #builder()}.
 *
 * <p><b>Commit modes.</b> {@link CommitMode#IMMEDIATE} (the default unless the store's {@code write.commit}
 * option says {@code atomic}): every put is durable and visible to every process when it returns.
 * {@link CommitMode#ATOMIC}: the handle stages its rows under a transaction id; nothing of them is
 * visible until {@link ContextStore#publish(String, java.util.Collection)} publishes the summaries its
 * {@code commit()} returned, together with those of the transaction's other handles.
 */
public final class WriterOptions {
  private static final WriterOptions DEFAULTS = new WriterOptions(null, 0, null, null, null, false);

  /** When a handle's rows become visible. */
  public enum CommitMode {
    /** Each put is durable and visible on return. */
    IMMEDIATE,
    /** Rows are staged under a transaction and become visible when it is published. */
    ATOMIC;

    /** Parses {@code immediate} or {@code atomic} (any case). */
    public static CommitMode parse(String s) {
      return switch (s.trim().toLowerCase(java.util.Locale.ROOT)) {
        case "immediate" -> IMMEDIATE;
        case "atomic" -> ATOMIC;
        default -> throw new IllegalArgumentException("commit mode must be 'immediate' or 'atomic', not '" + s + "'");
      };
    }

    /**
     * The commit mode of an engine's write: option {@code write.commit} when {@code options} set it (its key in
     * any case, as Spark hands options over), else {@code engineDefault}. A write that runs in one mode only
     * passes it as {@code required}, and {@code requiredBy} names what requires it (an option and its value, or
     * "an overwrite"), for the message. Core's one rule for both engines.
     *
     * @throws io.lancecontext.core.error.BadOptionException naming {@code write.commit}, for a value that does
     *     not parse or contradicts {@code required}
     */
    public static CommitMode forWrite(java.util.Map<String, String> options, CommitMode engineDefault,
        CommitMode required, String requiredBy) {
      String key = io.lancecontext.core.options.StoreOptions.WRITE_COMMIT.key();
      String given = options.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(key))
          .map(java.util.Map.Entry::getValue).findFirst().orElse(null);
      if (given == null) {
        return required != null ? required : engineDefault;
      }
      CommitMode mode;
      try {
        mode = parse(given);
      } catch (IllegalArgumentException e) {
        throw new io.lancecontext.core.error.BadOptionException(key, e.getMessage());
      }
      if (required != null && mode != required) {
        throw new io.lancecontext.core.error.BadOptionException(key, "'" + key + "' = '" + given.trim() + "' contradicts "
            + requiredBy + ", which writes " + required.name().toLowerCase(java.util.Locale.ROOT) + "; remove '" + key
            + "' or change " + requiredBy);
      }
      return mode;
    }

    /**
     * Checks that a store of {@code spec} (at {@code uri}, for the message) takes writes in this mode: a store with
     * capability {@code unique-ids} takes immediate writes only, since its checks need every key's current row at
     * the moment of the write. Core's rule, for engines to check before a job is planned.
     *
     * @throws io.lancecontext.core.error.SchemaException naming the capability, for a mode the store does not take
     */
    public void requireSupportedBy(io.lancecontext.core.schema.SchemaSpec spec, String uri) {
      if (this == ATOMIC && spec.has(io.lancecontext.core.schema.Capability.UNIQUE_IDS)) {
        throw new io.lancecontext.core.error.SchemaException("the store at " + uri + " has capability 'unique-ids', "
            + "which takes immediate writes only (atomic writes stage rows in transactions)");
      }
    }
  }

  private final String idSeed;
  private final long firstKeylessOrdinal;
  private final CommitMode commitMode;
  private final String transactionId;
  private final String partId;
  private final boolean continuous;

  private WriterOptions(String idSeed, long firstKeylessOrdinal, CommitMode commitMode, String transactionId,
      String partId, boolean continuous) {
    this.idSeed = idSeed;
    this.firstKeylessOrdinal = firstKeylessOrdinal;
    this.commitMode = commitMode;
    this.transactionId = transactionId;
    this.partId = partId;
    this.continuous = continuous;
  }

  /** No seed, the store's commit mode: keyless rows get random UUIDv7 keys. */
  public static WriterOptions defaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The seed of generated keys, if one was given (see {@link Builder#idSeed(String)}). */
  public Optional<String> idSeed() {
    return Optional.ofNullable(idSeed);
  }

  /** The ordinal of the handle's first keyless row (see {@link Builder#idSeed(String, long)}); 0 unless set. */
  public long firstKeylessOrdinal() {
    return firstKeylessOrdinal;
  }

  /** The commit mode asked for; empty: the store's {@code write.commit} option decides. */
  public Optional<CommitMode> commitMode() {
    return Optional.ofNullable(commitMode);
  }

  /** The transaction an atomic handle stages under. */
  public Optional<String> transactionId() {
    return Optional.ofNullable(transactionId);
  }

  /** Which writer of the transaction this handle is (orders equal keys within a transaction). */
  public Optional<String> partId() {
    return Optional.ofNullable(partId);
  }

  /** Whether the handle writes a stream (see {@link Builder#continuous()}). */
  public boolean continuous() {
    return continuous;
  }

  @Override
  public String toString() {
    return "WriterOptions[idSeed=" + idSeed + ", firstKeylessOrdinal=" + firstKeylessOrdinal + ", commitMode=" + commitMode + ", transactionId=" + transactionId
        + ", partId=" + partId + ", continuous=" + continuous + "]";
  }

  public static final class Builder {
    private String idSeed;
    private long firstKeylessOrdinal;
    private CommitMode commitMode;
    private String transactionId;
    private String partId;
    private boolean continuous;

    private Builder() {}

    /**
     * Derives the key of every row written without one from {@code seed} and the row's ordinal among the
     * keyless rows of the handle (0, 1, ...): a name-based UUID (version 5), the same for the same seed
     * and ordinal in every process. A retried task that uses the same seed and writes the same rows in
     * the same order therefore writes the same keys, and its rows replace the failed attempt's instead of
     * duplicating them. Choose a seed that names the task's input, not the attempt: for Spark
     * {@code <query or job id>/<partition id>} (not the attempt number); a writer that resumes
     * from a checkpoint continues its seed at the ordinal it had reached ({@link #idSeed(String, long)}, as the
     * Flink sink does). What breaks the
     * rule: a different row order or different rows (a non-deterministic source), another seed, rows
     * written through another handle; two handles with one seed write the same keys (the later rows win).
     */
    public Builder idSeed(String seed) {
      Objects.requireNonNull(seed, "seed");
      if (seed.isEmpty()) {
        throw new IllegalArgumentException("an id seed must not be empty");
      }
      this.idSeed = seed;
      return this;
    }

    /**
     * {@link #idSeed(String)}, with the handle's keyless rows numbered from {@code firstOrdinal} instead of 0: a
     * handle that continues the keyless rows of an earlier one with the same seed (whose
     * {@link StoreWriter#keylessRows()} it was) derives the keys that handle would have derived next. For a
     * writer whose keyless ordinals must survive a restore (Flink: the ordinal in the writer state).
     */
    public Builder idSeed(String seed, long firstOrdinal) {
      if (firstOrdinal < 0) {
        throw new IllegalArgumentException("a first keyless ordinal must not be negative: " + firstOrdinal);
      }
      idSeed(seed);
      this.firstKeylessOrdinal = firstOrdinal;
      return this;
    }

    /** The commit mode; unset, the store's {@code write.commit} option decides. */
    public Builder commitMode(CommitMode mode) {
      this.commitMode = Objects.requireNonNull(mode, "mode");
      return this;
    }

    /**
     * Makes the handle atomic, staging under {@code transactionId} (1 to 128 characters of
     * {@code [A-Za-z0-9._-]}, not starting with {@code bulk-}, e.g. a Spark job id with its epoch, a Flink job id with its checkpoint id) as
     * writer {@code partId} (any non-empty text, e.g. Spark {@code <partition>/<attempt>}, Flink
     * {@code <subtask>}). Within one transaction the last row of a key wins: the row of the greatest part
     * id (string order), and within a part the one written last.
     */
    public Builder transaction(String transactionId, String partId) {
      TxnIds.requireValid(transactionId);
      if (TxnIds.isBulk(transactionId)) {
        throw new IllegalArgumentException("transaction ids starting with '" + TxnIds.BULK_PREFIX + "' are the bulk "
            + "path's own");
      }
      Objects.requireNonNull(partId, "partId");
      if (partId.isEmpty()) {
        throw new IllegalArgumentException("a part id must not be empty");
      }
      this.transactionId = transactionId;
      this.partId = partId;
      this.commitMode = CommitMode.ATOMIC;
      return this;
    }

    /**
     * Marks the handle as writing a stream: many puts over time, each to be visible soon (a Flink at-least-once
     * sink, a logging agent). Its immediate puts go through the MemWAL whatever their size, unless the store's
     * {@code write.bulk-rows} is set explicitly: the bulk path writes a Lance dataset and publishes a transaction
     * per put, which pays off once for a batch job's large write but costs more than WAL puts when puts repeat
     * (1.4x to 3.5x slower in {@code FlinkIngestBenchmark}). Unset, a put of at least {@code write.bulk-rows}
     * rows (by default {@code write.batch-rows}: a full buffer) takes the bulk path.
     */
    public Builder continuous() {
      this.continuous = true;
      return this;
    }

    /**
     * @throws IllegalArgumentException if the mode is atomic without a transaction, or immediate with one
     */
    public WriterOptions build() {
      if (commitMode == CommitMode.ATOMIC && transactionId == null) {
        throw new IllegalArgumentException("an atomic write handle needs a transaction id and a part id "
            + "(WriterOptions.Builder.transaction)");
      }
      if (commitMode == CommitMode.IMMEDIATE && transactionId != null) {
        throw new IllegalArgumentException("an immediate write handle has no transaction");
      }
      return new WriterOptions(idSeed, firstKeylessOrdinal, commitMode, transactionId, partId, continuous);
    }
  }
}
