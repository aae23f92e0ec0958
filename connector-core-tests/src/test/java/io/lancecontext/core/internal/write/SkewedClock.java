package io.lancecontext.core.internal.write;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.FencedWriterException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Runs this JVM's write-sequence clock ahead or behind the real one. Also the main class of a child JVM
 * writing with a skewed clock: {@code <path> <skewMillis> [option=value ...]}, then stdin commands
 * {@code add <key> <sequence_order>} (answers {@code ack}, {@code fenced} or {@code error <detail>}),
 * {@code seal}, {@code merge} (answer {@code ok}), {@code halt} (exits without closing: a crash).
 */
public final class SkewedClock implements AutoCloseable {
  private final LongSupplier previous;

  private SkewedClock(Duration skew) {
    previous = WriteSequence.clockMicros;
    long skewMicros = skew.toNanos() / 1_000;
    WriteSequence.clockMicros = () -> System.currentTimeMillis() * 1_000L + skewMicros;
  }

  /** Skews the clock of every bucket writer of this JVM until closed. */
  public static SkewedClock by(Duration skew) {
    return new SkewedClock(skew);
  }

  @Override
  public void close() {
    WriteSequence.clockMicros = previous;
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    Map<String, String> options = new HashMap<>();
    options.put("path", args[0]);
    for (int i = 2; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      options.put(kv[0], kv[1]);
    }
    SkewedClock.by(Duration.ofMillis(Long.parseLong(args[1])));
    ContextStore store = ContextStore.open(options);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    out.println("ready");
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.split(" ");
      switch (p[0]) {
        case "add" -> {
          Map<String, Object> r = new HashMap<>();
          r.put("id", p[1]);
          r.put("sequence_order", Integer.parseInt(p[2]));
          try {
            store.add(List.of(r));
            out.println("ack");
          } catch (FencedWriterException e) {
            out.println("fenced");
          } catch (RuntimeException e) {
            out.println("error " + e.toString().replace('\n', ' '));
          }
        }
        case "seal" -> {
          store.seal();
          out.println("ok");
        }
        case "merge" -> {
          store.merge();
          out.println("ok");
        }
        case "halt" -> Runtime.getRuntime().halt(0);
        default -> out.println("unknown " + p[0]);
      }
    }
    store.close();
  }
}
