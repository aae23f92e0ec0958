package io.lancecontext.core;

import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.UniqueKeyViolationException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Child JVM adding new keys to a {@code unique-ids} store on command, so that a test can make several of
 * them add the same key at the same moment: {@code <path> <writer>}; stdin {@code add <key>} adds
 * {@code {id: key, v: writer}}, retrying while it is not acknowledged, and answers {@code ack},
 * {@code dup <v of the row found>} or {@code error <detail>}; {@code exit} closes the store.
 */
public final class UniqueRacer {
  private UniqueRacer() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    long writer = Long.parseLong(args[1]);
    // lanes are sealed (and switched) every half second, so racing writers often hold different lanes
    try (ContextStore store = ContextStore.open(Map.of("path", args[0], "write.fence-backoff", "20ms",
        "write.put-timeout", "20s", "merge.trigger.interval", "1s"))) {
      store.count();
      out.println("ready");
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line;
      while ((line = in.readLine()) != null && !line.equals("exit")) {
        String key = line.substring("add ".length());
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
          try {
            store.add(List.of(Map.of("id", key, "v", writer)));
            out.println("ack");
            break;
          } catch (UniqueKeyViolationException e) {
            // the writer whose row it found, for a failing test's message
            out.println("dup " + store.get(key).map(r -> r.get("v")).orElse(null));
            break;
          } catch (FencedWriterException e) {
            System.err.println("fenced adding " + key + ", retrying: " + e.getMessage());
            if (System.nanoTime() > deadline) {
              out.println("error " + e.getMessage().replace('\n', ' '));
              break;
            }
          } catch (RuntimeException e) {
            out.println("error " + e.toString().replace('\n', ' '));
            break;
          }
        }
      }
    }
  }
}
