package io.lancecontext.core.options;

import io.lancecontext.core.error.BadOptionException;
import java.util.Objects;
import java.util.function.Function;

/**
 * A typed option: key, default, description and parser in one place. Engines map their own option
 * syntax onto these keys; {@code docs/options.md} is checked against them by a test.
 *
 * @param <T> the parsed value type
 */
public final class ConfigOption<T> {
  /**
   * Who holds an option's value. Handles of one store in one JVM share one resident store; an option of
   * scope {@link #RESIDENT} or {@link #STORE} that a handle sets must agree with it, or the open fails.
   */
  public enum Scope {
    /** Fixed when the store is created (or identifies it); checked against the store on every open. */
    STORE("store"),
    /** One value per store per JVM, taken from the first handle that opens it. */
    RESIDENT("resident store"),
    /** Each handle uses its own value. */
    HANDLE("handle"),
    /** One value per JVM (the shared Lance session), taken from the first store that builds it. */
    JVM("JVM");

    private final String label;

    Scope(String label) {
      this.label = label;
    }

    /** How the documentation names this scope. */
    public String label() {
      return label;
    }
  }

  private final String key;
  private final T defaultValue;
  private final String defaultText;
  private final String description;
  private final Function<String, T> parser;
  private final boolean required;
  private final Scope scope;

  private ConfigOption(String key, T defaultValue, String defaultText, String description, Function<String, T> parser,
      boolean required, Scope scope) {
    this.key = key;
    this.defaultValue = defaultValue;
    this.defaultText = defaultText;
    this.description = description;
    this.parser = parser;
    this.required = required;
    this.scope = scope;
  }

  /**
   * An option with a default, parsed by {@code parser} (which throws on a bad value). Core's options are the
   * constants of {@link StoreOptions}; adapters declare their engine-only options with this too, so every
   * option of the project parses, fails and is documented the same way.
   */
  public static <T> ConfigOption<T> of(String key, String defaultText, Function<String, T> parser, Scope scope,
      String description) {
    return new ConfigOption<>(key, parser.apply(defaultText), defaultText, description, parser, false, scope);
  }

  static <T> ConfigOption<T> required(String key, Function<String, T> parser, Scope scope, String description) {
    return new ConfigOption<>(key, null, null, description, parser, true, scope);
  }

  /** An option without a default ({@link #defaultValue()} and {@link #defaultText()} are null); see {@link #of}. */
  public static <T> ConfigOption<T> optional(String key, Function<String, T> parser, Scope scope, String description) {
    return new ConfigOption<>(key, null, null, description, parser, false, scope);
  }

  public String key() {
    return key;
  }

  /** The default, or null when the option is required or has no default. */
  public T defaultValue() {
    return defaultValue;
  }

  /** The default as users write it (for documentation), or null. */
  public String defaultText() {
    return defaultText;
  }

  public String description() {
    return description;
  }

  public boolean isRequired() {
    return required;
  }

  public Scope scope() {
    return scope;
  }

  /** Parses a user-supplied value; a bad value raises {@link BadOptionException} naming this key. */
  public T parse(String value) {
    if (value == null) {
      throw new BadOptionException(key, "value is null");
    }
    try {
      return parser.apply(value.trim());
    } catch (BadOptionException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new BadOptionException(key, "cannot parse '" + value + "': " + e.getMessage());
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ConfigOption<?> other && key.equals(other.key);
  }

  @Override
  public int hashCode() {
    return Objects.hash(key);
  }

  @Override
  public String toString() {
    return key;
  }
}
