package io.lancecontext.spark.read;

import org.apache.spark.sql.connector.read.streaming.Offset;

/**
 * A streaming read's position: a snapshot token (or the tag option {@code since} named), or {@link #EARLIEST},
 * before anything the store holds. Its JSON is the token as a JSON string ({@code "-earliest"} for the start; no
 * token or tag begins with '-').
 */
final class SnapshotOffset extends Offset {
  private static final String EARLIEST_JSON = "-earliest";
  static final SnapshotOffset EARLIEST = new SnapshotOffset(null);

  private final String token;

  SnapshotOffset(String token) {
    this.token = token;
  }

  /** The token or tag; null for {@link #EARLIEST}. */
  String token() {
    return token;
  }

  boolean earliest() {
    return token == null;
  }

  static SnapshotOffset fromJson(String json) {
    String s = json.strip();
    if (s.length() < 2 || s.charAt(0) != '"' || s.charAt(s.length() - 1) != '"') {
      throw new IllegalArgumentException("not a lancecontext streaming offset: " + json);
    }
    s = s.substring(1, s.length() - 1);
    return s.equals(EARLIEST_JSON) ? EARLIEST : new SnapshotOffset(s);
  }

  @Override
  public String json() {
    return "\"" + (token == null ? EARLIEST_JSON : token) + "\"";
  }
}
