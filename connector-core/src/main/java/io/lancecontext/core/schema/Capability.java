package io.lancecontext.core.schema;

import java.util.Arrays;
import java.util.Optional;

/** Opt-in behaviours of a store, declared in its spec (design §3). */
public enum Capability {
  /** {@code delete(key)} writes a tombstone; tombstoned keys are hidden from reads. */
  TOMBSTONES("tombstones"),
  /**
   * A record may name, in its {@code supersedes} column, the key of a record it replaces; replaced
   * records are hidden from reads by default.
   */
  SUPERSESSION("supersession"),
  /**
   * Records whose {@code lifecycle_status} is a retired status or whose {@code expires_at} has passed
   * are hidden from reads by default.
   */
  LIFECYCLE("lifecycle"),
  /** An add whose key already exists fails instead of upserting. */
  UNIQUE_IDS("unique-ids");

  private final String jsonName;

  Capability(String jsonName) {
    this.jsonName = jsonName;
  }

  public String jsonName() {
    return jsonName;
  }

  public static Optional<Capability> fromJsonName(String name) {
    return Arrays.stream(values()).filter(c -> c.jsonName.equals(name)).findFirst();
  }

  @Override
  public String toString() {
    return jsonName;
  }
}
