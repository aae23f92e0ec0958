package io.lancecontext.benchmarks;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;

/**
 * Counts the HTTP requests every AWS SDK v2 client of this JVM sends, by operation, retries included: a global
 * interceptor, which the SDK adds to each client it builds because
 * {@code software/amazon/awssdk/global/handlers/execution.interceptors} (in the benchmarks' resources) names it.
 * In {@link ObjectStoreBenchmark}'s store JVM the only such client is lancecontext's own S3 client (lance-core's
 * requests go through its Rust object store), so these are lancecontext's requests.
 */
public final class SdkRequests implements ExecutionInterceptor {
  private static final ConcurrentMap<String, LongAdder> COUNTS = new ConcurrentHashMap<>();

  @Override
  public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
    String op = Objects.requireNonNullElse(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME), "?");
    COUNTS.computeIfAbsent(op, k -> new LongAdder()).increment();
  }

  /** Requests sent so far, by operation name ({@code GetObject}, ...). */
  static Map<String, Long> counts() {
    Map<String, Long> out = new TreeMap<>();
    COUNTS.forEach((op, n) -> out.put(op, n.sum()));
    return out;
  }

  /** Requests sent so far, all operations. */
  static long total() {
    return COUNTS.values().stream().mapToLong(LongAdder::sum).sum();
  }
}
