package io.lancecontext.flink.sink;

import java.io.Serializable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Turns a DataStream element into a store record: a map by column name, with the values core's
 * {@code StoreWriter.write(Map)} takes (docs/schema.md). Core checks the record against the store's schema
 * (an unknown column or a wrong type fails naming the column). Serializable: it ships with the sink.
 *
 * <pre>{@code
 * LanceContextSink<Rollout> sink = LanceContextSink.builder().options(Map.of("path", p))
 *     .build(r -> Map.of("id", r.id(), "reward", r.reward()));
 * }</pre>
 */
@FunctionalInterface
public interface RecordConverter<T> extends Serializable {
  Map<String, ?> toRecord(T element);

  /** Maps taken as they are. */
  static <M extends Map<String, ?>> RecordConverter<M> maps() {
    return m -> m;
  }

  /**
   * A POJO's public non-static fields, and its public getters ({@code getX()}/{@code isX()} as column
   * {@code x}, record accessors under their own name), as columns of the same name; a null value is a null.
   * Members are resolved once, when the converter is made.
   *
   * @throws IllegalArgumentException if the class has no such member
   */
  static <T> RecordConverter<T> pojo(Class<T> type) {
    return new PojoConverter<>(type);
  }

  /** The reflective converter of {@link #pojo}. */
  final class PojoConverter<T> implements RecordConverter<T> {
    private static final long serialVersionUID = 1L;
    private final Class<T> type;
    private transient Map<String, Object> members;

    private PojoConverter(Class<T> type) {
      this.type = type;
      if (members().isEmpty()) {
        throw new IllegalArgumentException(type.getName() + " has no public field or getter to write");
      }
    }

    private Map<String, Object> members() {
      if (members == null) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (Field f : type.getFields()) {
          if (!Modifier.isStatic(f.getModifiers())) {
            m.put(f.getName(), f);
          }
        }
        for (Method g : type.getMethods()) {
          if (Modifier.isStatic(g.getModifiers()) || g.getParameterCount() != 0 || g.getDeclaringClass() == Object.class
              || g.getReturnType() == void.class) {
            continue;
          }
          String n = g.getName();
          if (type.isRecord() && isComponent(n)) {
            m.put(n, g);
          } else if (n.startsWith("get") && n.length() > 3) {
            m.putIfAbsent(Character.toLowerCase(n.charAt(3)) + n.substring(4), g);
          } else if (n.startsWith("is") && n.length() > 2 && g.getReturnType() == boolean.class) {
            m.putIfAbsent(Character.toLowerCase(n.charAt(2)) + n.substring(3), g);
          }
        }
        members = m;
      }
      return members;
    }

    private boolean isComponent(String name) {
      for (var c : type.getRecordComponents()) {
        if (c.getName().equals(name)) {
          return true;
        }
      }
      return false;
    }

    @Override
    public Map<String, ?> toRecord(T element) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (var e : members().entrySet()) {
        try {
          Object v = e.getValue() instanceof Field f ? f.get(element) : ((Method) e.getValue()).invoke(element);
          out.put(e.getKey(), v);
        } catch (ReflectiveOperationException x) {
          throw new IllegalStateException("reading '" + e.getKey() + "' of a " + type.getName() + " failed", x);
        }
      }
      return out;
    }
  }
}
