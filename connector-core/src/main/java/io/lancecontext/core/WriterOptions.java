package io.lancecontext.core;

import java.util.Objects;
import java.util.Optional;

/**
 * How a write handle ({@link ContextStore#newWriter(WriterOptions)}) is made. Today: the seed of the
 * keys it gives rows written without one. Immutable; build with {@link #builder()}.
 */
public final class WriterOptions {
  private static final WriterOptions DEFAULTS = new WriterOptions(null);

  private final String idSeed;

  private WriterOptions(String idSeed) {
    this.idSeed = idSeed;
  }

  /** No seed: keyless rows get random UUIDv7 keys. */
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

  @Override
  public String toString() {
    return "WriterOptions[idSeed=" + idSeed + "]";
  }

  public static final class Builder {
    private String idSeed;

    private Builder() {}

    /**
     * Derives the key of every row written without one from {@code seed} and the row's ordinal among the
     * keyless rows of the handle (0, 1, ...): a name-based UUID (version 5), the same for the same seed
     * and ordinal in every process. A retried task that uses the same seed and writes the same rows in
     * the same order therefore writes the same keys, and its rows replace the failed attempt's instead of
     * duplicating them. Choose a seed that names the task's input, not the attempt: for Spark
     * {@code <query or job id>/<partition id>} (not the attempt number), for Flink
     * {@code <job id>/<subtask index>/<checkpoint id>} with a new handle per checkpoint. What breaks the
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

    public WriterOptions build() {
      return new WriterOptions(idSeed);
    }
  }
}
