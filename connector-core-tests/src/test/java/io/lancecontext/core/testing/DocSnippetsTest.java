package io.lancecontext.core.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

/** The docs tests' jshell: one per JVM, and each block on its own, as a reader pastes it into a new jshell. */
class DocSnippetsTest {
  @Test
  void aBlockSeesNothingAnEarlierBlockDeclaredOrImported() {
    DocSnippets.runJava("first", "import java.util.concurrent.atomic.AtomicLong;\nint declared = 41;\n"
        + "AtomicLong counter = new AtomicLong(declared);\n");
    AssertionFailedError e = assertThrows(AssertionFailedError.class,
        () -> DocSnippets.runJava("second", "System.out.println(declared + 1);\n"));
    assertTrue(e.getMessage().contains("second does not compile"), e.getMessage());
    assertThrows(AssertionFailedError.class, () -> DocSnippets.runJava("third", "AtomicLong again = null;\n"));
    // the same names declared and imported again, as in a new jshell
    DocSnippets.runJava("fourth", "import java.util.List;\nList<Integer> declared = List.of(1, 2);\n"
        + "System.setProperty(\"lancecontext.docsnippets.test\", declared.toString());\n");
    assertEquals("[1, 2]", System.clearProperty("lancecontext.docsnippets.test"));
  }
}
