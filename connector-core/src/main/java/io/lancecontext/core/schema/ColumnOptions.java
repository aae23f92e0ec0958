package io.lancecontext.core.schema;

import io.lancecontext.core.error.BadOptionException;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The per-column options an engine's table options carry when a store's spec is derived from the engine's
 * columns (a Spark DataFrame or {@code CREATE TABLE}, a Flink DDL): {@code vector.<col>.dim} and
 * {@code vector.<col>.metric} make a top-level list-of-float32 column a vector, {@code blob.<col>} = {@code true}
 * makes a top-level binary column a blob (large_binary, blob encoding). The one place their names and values
 * are parsed; adapters say what type an engine column has and get core's answer and core's errors.
 *
 * <p>Every option of these prefixes must name a declared column and a known property ({@code vector.emb.dimm}
 * fails naming it); with a spec that already exists (a preset, a JSON spec, a store created before), each must
 * agree with it ({@link #checkAgainst}), so that options reused after the store was created still say what the
 * store is.
 */
public final class ColumnOptions {
  /** Prefix of the per-column vector options. */
  public static final String VECTOR_PREFIX = "vector.";
  /** Prefix of the per-column blob option. */
  public static final String BLOB_PREFIX = "blob.";

  private static final Pattern VECTOR_OPTION = Pattern.compile("vector\\.([^.]+)\\.(dim|metric)");

  /** The column options given, by key (lower-case prefixes; the column part as given). */
  private final Map<String, String> options;

  private ColumnOptions(Map<String, String> options) {
    this.options = options;
  }

  /** {@code vector.<col>.dim}. */
  public static String vectorDimOption(String column) {
    return VECTOR_PREFIX + column + ".dim";
  }

  /** {@code vector.<col>.metric}. */
  public static String vectorMetricOption(String column) {
    return VECTOR_PREFIX + column + ".metric";
  }

  /** {@code blob.<col>}. */
  public static String blobOption(String column) {
    return BLOB_PREFIX + column;
  }

  /** Whether {@code key} is a per-column option ({@code vector.*}, {@code blob.*}; the prefix in any case). */
  public static boolean isColumnOption(String key) {
    String lower = key.toLowerCase(Locale.ROOT);
    return lower.startsWith(VECTOR_PREFIX) || lower.startsWith(BLOB_PREFIX);
  }

  /**
   * The per-column options among {@code options} (others are ignored), each checked to name one of
   * {@code columns} and a known property.
   *
   * @throws BadOptionException naming an option that does not
   */
  public static ColumnOptions of(Map<String, String> options, Collection<String> columns) {
    Map<String, String> mine = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : options.entrySet()) {
      if (!isColumnOption(e.getKey())) {
        continue;
      }
      String key = normalized(e.getKey());
      String column = columnOf(key);
      if (!columns.contains(column)) {
        throw new BadOptionException(e.getKey(), "names column '" + column + "', which the table does not declare; its columns are "
            + List.copyOf(columns));
      }
      mine.put(key, e.getValue());
    }
    return new ColumnOptions(mine);
  }

  /** The key with its prefix lower-cased (engines may lower-case option keys; column names keep their case). */
  private static String normalized(String key) {
    String prefix = key.toLowerCase(Locale.ROOT).startsWith(VECTOR_PREFIX) ? VECTOR_PREFIX : BLOB_PREFIX;
    String rest = key.substring(prefix.length());
    if (prefix.equals(VECTOR_PREFIX)) {
      int dot = rest.lastIndexOf('.');
      if (dot > 0) {
        rest = rest.substring(0, dot) + rest.substring(dot).toLowerCase(Locale.ROOT);
      }
    }
    return prefix + rest;
  }

  private static String columnOf(String key) {
    if (key.startsWith(VECTOR_PREFIX)) {
      Matcher m = VECTOR_OPTION.matcher(key);
      if (!m.matches()) {
        throw new BadOptionException(key, "unknown option; vector columns take 'vector.<col>.dim' and "
            + "'vector.<col>.metric'");
      }
      return m.group(1);
    }
    return key.substring(BLOB_PREFIX.length());
  }

  /** Whether no per-column option was given. */
  public boolean isEmpty() {
    return options.isEmpty();
  }

  /**
   * Top-level column {@code column} as a vector when {@code vector.<col>.dim} is given, else empty.
   *
   * @param floatList whether the engine's column is a list of float32 (the only type a vector can be)
   * @param engineType the engine's type of the column, for messages
   * @throws BadOptionException for a dimension that is not a positive integer, an unknown metric, a metric
   *     without a dimension, or a column that is not a list of float32
   */
  public Optional<ColumnSpec> vector(String column, boolean floatList, String engineType) {
    String dim = options.get(vectorDimOption(column));
    if (dim == null) {
      if (options.containsKey(vectorMetricOption(column))) {
        throw new BadOptionException(vectorMetricOption(column), "a vector needs its dimension: set '"
            + vectorDimOption(column) + "' too (without it, column '" + column + "' is a list)");
      }
      return Optional.empty();
    }
    if (!floatList) {
      throw new BadOptionException(vectorDimOption(column), "column '" + column + "' is " + engineType
          + ": only ARRAY<FLOAT> columns can be vectors");
    }
    int d;
    try {
      d = Integer.parseInt(dim.strip());
    } catch (NumberFormatException e) {
      d = 0;
    }
    if (d <= 0) {
      throw new BadOptionException(vectorDimOption(column), "must be a positive integer, not '" + dim + "'");
    }
    return Optional.of(ColumnSpec.vector(column, d, metric(column)));
  }

  /**
   * Whether top-level column {@code column} is to be a blob ({@code blob.<col>} = true).
   *
   * @param binary whether the engine's column is binary (the only type a blob can be)
   * @throws BadOptionException for a value other than true/false, or a blob of a column that is not binary
   */
  public boolean blob(String column, boolean binary, String engineType) {
    boolean blob = isTrue(blobOption(column));
    if (blob && !binary) {
      throw new BadOptionException(blobOption(column), "column '" + column + "' is " + engineType
          + ": only BYTES columns can be blobs");
    }
    return blob;
  }

  /**
   * Checks every option against {@code spec}: each names a column the spec holds as a vector of that dimension and
   * metric, or as a blob (or, {@code blob.<col>} = false, as no blob).
   *
   * @throws BadOptionException naming the option that disagrees
   */
  public void checkAgainst(SchemaSpec spec) {
    for (Map.Entry<String, String> e : options.entrySet()) {
      String key = e.getKey();
      String column = columnOf(key);
      ColumnSpec c = spec.column(column);
      if (key.startsWith(VECTOR_PREFIX)) {
        if (c == null || c.type() != ColumnType.VECTOR) {
          throw new BadOptionException(key, "column '" + column + "' of the store is not a vector"
              + (c == null ? "" : " (it is " + c.type().jsonName() + ")"));
        }
        if (key.endsWith(".dim")) {
          if (!e.getValue().strip().equals(Integer.toString(c.dim()))) {
            throw new BadOptionException(key, "the store's vector '" + column + "' has dim " + c.dim() + ", not '"
                + e.getValue() + "'");
          }
        } else if (metric(column) != c.metric()) {
          throw new BadOptionException(key, "the store's vector '" + column + "' has metric " + c.metric().jsonName()
              + ", not '" + e.getValue() + "'");
        }
      } else if (isTrue(key) != (c != null && c.blob())) {
        throw new BadOptionException(key, "column '" + column + "' of the store is " + (c != null && c.blob() ? "" : "not ")
            + "a blob");
      }
    }
  }

  private VectorMetric metric(String column) {
    String metric = options.getOrDefault(vectorMetricOption(column), VectorMetric.COSINE.jsonName()).strip();
    return VectorMetric.fromJsonName(metric).orElseThrow(() -> new BadOptionException(vectorMetricOption(column),
        "unknown metric '" + metric + "' (l2, cosine or dot, in any case)"));
  }

  private boolean isTrue(String key) {
    String v = options.get(key);
    if (v == null) {
      return false;
    }
    return switch (v.strip().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new BadOptionException(key, "must be true or false, not '" + v + "'");
    };
  }
}
