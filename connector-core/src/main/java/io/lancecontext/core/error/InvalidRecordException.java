package io.lancecontext.core.error;

/**
 * A record (or a row of an Arrow batch) does not fit the store's schema: unknown column, wrong type,
 * wrong vector length, null in a non-nullable column, null or empty key. Names the column (dotted path
 * for nested fields) and the row index within the batch. Nothing of the batch is written.
 */
public class InvalidRecordException extends LanceContextException {
  private static final long serialVersionUID = 1L;
  private final String column;
  private final int row;

  public InvalidRecordException(String column, int row, String message) {
    super("row " + row + ", column '" + column + "': " + message);
    this.column = column;
    this.row = row;
  }

  public String column() {
    return column;
  }

  /** Zero-based index of the offending row in the batch that was passed in. */
  public int row() {
    return row;
  }
}
