import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Collections;
import org.apache.commons.compress.archivers.zip.Zip64Mode;
import org.apache.commons.compress.archivers.zip.ZipArchiveEntry;
import org.apache.commons.compress.archivers.zip.ZipArchiveOutputStream;
import org.apache.commons.compress.archivers.zip.ZipFile;

/**
 * Adds the native libraries of lance-core (and of Arrow's dataset module) to a bundle jar as their own jars hold
 * them, without inflating and deflating them again.
 *
 * <p>The bundles (spark-bundle, flink-bundle) shade everything but those libraries ({@code nativelib/**} of
 * lance-core, {@code arrow_dataset_jni/**} of arrow-dataset: about 760 MB for all platforms), which this program
 * then copies in: the compressed bytes, sizes and CRCs of the source jars' entries, byte for byte. The shade plugin,
 * which has no way to copy an entry raw, spent most of a bundle's 30 s of CPU deflating them again. Every entry of
 * the shaded jar is copied raw as well, in its order.
 *
 * <p>Usage, with commons-compress on the class path (the bundles' POMs run it in the package phase, after the
 * shade): {@code java -cp commons-compress.jar AddNativeLibraries.java <bundle.jar> (<source.jar> <prefix>)...}.
 * It fails when the shaded jar already holds an entry under a prefix or a source jar holds none.
 */
public final class AddNativeLibraries {
  private AddNativeLibraries() {}

  public static void main(String[] args) throws IOException {
    if (args.length < 3 || args.length % 2 == 0) {
      throw new IllegalArgumentException("usage: AddNativeLibraries <bundle.jar> (<source.jar> <prefix>)...");
    }
    Path bundle = Paths.get(args[0]);
    Path partial = bundle.resolveSibling(bundle.getFileName() + ".partial");
    StringBuilder report = new StringBuilder();
    try (ZipFile shaded = ZipFile.builder().setPath(bundle).get();
        ZipArchiveOutputStream out = new ZipArchiveOutputStream(partial)) {
      out.setUseZip64(Zip64Mode.AsNeeded);
      for (ZipArchiveEntry e : Collections.list(shaded.getEntriesInPhysicalOrder())) {
        for (int i = 2; i < args.length; i += 2) {
          if (e.getName().startsWith(args[i])) {
            throw new IllegalStateException(bundle + " already holds " + e.getName() + ": the shade must exclude "
                + args[i] + "** of " + Paths.get(args[i - 1]).getFileName());
          }
        }
        out.addRawArchiveEntry(e, shaded.getRawInputStream(e));
      }
      for (int i = 1; i < args.length; i += 2) {
        Path source = Paths.get(args[i]);
        String prefix = args[i + 1];
        int added = 0;
        long bytes = 0;
        try (ZipFile natives = ZipFile.builder().setPath(source).get()) {
          for (ZipArchiveEntry e : Collections.list(natives.getEntriesInPhysicalOrder())) {
            if (e.getName().startsWith(prefix)) {
              out.addRawArchiveEntry(e, natives.getRawInputStream(e));
              added++;
              bytes += Math.max(0, e.getSize());
            }
          }
        }
        if (added == 0) {
          throw new IllegalStateException(source + " holds no entry under " + prefix);
        }
        report.append(String.format("%n  %d entries under %s of %s (%d MiB uncompressed)", added, prefix,
            source.getFileName(), bytes >> 20));
      }
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(partial);
      throw e;
    }
    Files.move(partial, bundle, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    System.out.println("Added to " + bundle.getFileName() + " without recompressing them:" + report);
  }
}
