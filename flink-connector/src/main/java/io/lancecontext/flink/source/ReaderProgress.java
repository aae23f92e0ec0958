package io.lancecontext.flink.source;

import java.util.List;
import java.util.Map;
import org.apache.flink.api.connector.source.SourceEvent;

/**
 * What a continuous source's reader tells its enumerator about the splits it holds, so that the enumerator knows
 * which positions a checkpoint of the readers may still refer to (and keeps their tags).
 */
sealed interface ReaderProgress extends SourceEvent {
  /** The reader read these splits to their end. */
  record Finished(List<String> splitIds) implements ReaderProgress {}

  /** Sent when a reader starts: the splits it holds (restored from a checkpoint), by id, with their generation. */
  record Holding(Map<String, Long> splits) implements ReaderProgress {}
}
