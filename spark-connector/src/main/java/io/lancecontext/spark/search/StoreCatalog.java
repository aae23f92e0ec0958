package io.lancecontext.spark.search;

import io.lancecontext.core.ContextStore;

/** A Spark catalog whose tables are stores: what the {@code vector_search} table function resolves names in. */
public interface StoreCatalog {
  /** Opens the store of {@code table} ({@code namespace.name} within the catalog); the caller closes it. */
  ContextStore openTable(String table);
}
