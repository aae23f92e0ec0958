package io.lancecontext.flink.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancecontext.core.ContextStore;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobInfo;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.common.operators.ProcessingTimeService.ProcessingTimeCallback;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When an at-least-once writer puts what it buffered ({@code sink.buffer-flush.interval}), on a clock the test moves. */
class SinkWriterFlushTest {
  @TempDir
  Path dir;

  private final long[] clock = {1_000};
  private final List<Long> dues = new ArrayList<>();
  private final List<ProcessingTimeCallback> callbacks = new ArrayList<>();

  @Test
  void theNextPutIsDueOneIntervalAfterThePreviousWasDueOrAtOnceWhenThatPassed() {
    assertEquals(1_200, LanceContextSinkWriter.nextFlush(1_100, 1_180, 100));
    assertEquals(1_450, LanceContextSinkWriter.nextFlush(1_100, 1_450, 100));
  }

  @Test
  void anAtLeastOnceWriterPutsAtAFixedRateWhateverItsPutsTake() throws Exception {
    Map<String, String> options = Map.of("path", dir.resolve("s").toString(), "schema", "context", "shards", "1");
    try (LanceContextSinkWriter<Map<String, Object>> writer = new LanceContextSinkWriter<>(options,
        SinkFormat.records(RecordConverter.<Map<String, Object>>maps(), "id"), false, false, Duration.ofMillis(100),
        "flush", context(), 0, null)) {
      assertEquals(List.of(1_100L), dues);
      writer.write(Map.of("id", "a", "text_payload", "first"), null);
      clock[0] = 1_180;  // the put the timer makes ends at 1,180
      callbacks.get(0).onProcessingTime(1_100);
      assertEquals(1_200L, dues.get(1), "due one interval after the previous put was due, not after the put ended");
      try (ContextStore store = ContextStore.open(options)) {
        assertEquals(1, store.count(), "the timer's put made the row durable and visible");
      }
      writer.write(Map.of("id", "b", "text_payload", "second"), null);
      clock[0] = 1_450;  // a put that overran its interval: the next one is due at once
      callbacks.get(1).onProcessingTime(1_200);
      assertEquals(1_450L, dues.get(2));
      try (ContextStore store = ContextStore.open(options)) {
        assertEquals(2, store.count());
      }
    }
  }

  private WriterInitContext context() {
    ProcessingTimeService timers = proxy(ProcessingTimeService.class, (method, args) -> switch (method) {
      case "getCurrentProcessingTime" -> clock[0];
      case "registerTimer" -> {
        dues.add((Long) args[0]);
        callbacks.add((ProcessingTimeCallback) args[1]);
        yield null;
      }
      default -> throw new UnsupportedOperationException(method);
    });
    TaskInfo task = proxy(TaskInfo.class, (method, args) -> switch (method) {
      case "getIndexOfThisSubtask", "getAttemptNumber" -> 0;
      case "getNumberOfParallelSubtasks", "getMaxNumberOfParallelSubtasks" -> 1;
      default -> throw new UnsupportedOperationException(method);
    });
    JobID jobId = new JobID();
    JobInfo job = proxy(JobInfo.class, (method, args) -> switch (method) {
      case "getJobId" -> jobId;
      case "getJobName" -> "flush";
      default -> throw new UnsupportedOperationException(method);
    });
    var metrics = UnregisteredMetricsGroup.createSinkWriterMetricGroup();
    return proxy(WriterInitContext.class, (method, args) -> switch (method) {
      case "getTaskInfo" -> task;
      case "getJobInfo" -> job;
      case "metricGroup" -> metrics;
      case "getProcessingTimeService" -> timers;
      default -> throw new UnsupportedOperationException(method);
    });
  }

  @FunctionalInterface
  private interface Answer {
    Object answer(String method, Object[] args);
  }

  private static <T> T proxy(Class<T> type, Answer answer) {
    return type.cast(Proxy.newProxyInstance(SinkWriterFlushTest.class.getClassLoader(), new Class<?>[] {type},
        (p, method, args) -> switch (method.getName()) {
          case "toString" -> type.getSimpleName();
          case "hashCode" -> System.identityHashCode(p);
          case "equals" -> p == args[0];
          default -> answer.answer(method.getName(), args);
        }));
  }
}
