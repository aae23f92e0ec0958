package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.testing.S3ServerExtension;
import io.lancecontext.core.testing.StoreTest;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;

/** Namespaces and stores under one root, on a local disk and on S3: what engines' catalogs list, create and drop. */
class WarehouseTest extends StoreTest {
  @RegisterExtension static final S3ServerExtension S3 = new S3ServerExtension();

  private static ContextStore createStore(Warehouse w, List<String> ns, String name) {
    Map<String, String> o = new HashMap<>(w.storeOptions(ns, name));
    o.put("schema", "rollout");
    o.put("schema.embedding-dim", "4");
    return ContextStore.open(o);
  }

  @Test
  void namespacesAndStoresOnALocalDiskAreListedCreatedAndDropped() throws Exception {
    Warehouse w = Warehouse.open(dir.resolve("wh").toString(), Map.of("shards", "2"));
    assertEquals(List.of(), w.namespaces(List.of()), "a root that does not exist yet is an empty warehouse");
    assertTrue(w.createNamespace(List.of("db")));
    assertFalse(w.createNamespace(List.of("db")), "already there");
    assertTrue(w.createNamespace(List.of("db", "sub", "deeper")), "nested, with the namespaces above it");
    assertEquals(List.of("db"), w.namespaces(List.of()));
    assertEquals(List.of("sub"), w.namespaces(List.of("db")));
    assertEquals(List.of("deeper"), w.namespaces(List.of("db", "sub")));
    assertEquals(dir.resolve("wh/db/t").toAbsolutePath().toString(), w.location(List.of("db"), "t"));

    try (ContextStore t = createStore(w, List.of("db"), "t")) {
      t.add(List.of(Map.of("id", "k1", "sequence_order", 1)));
      assertEquals(2, t.shards(), "the warehouse's options are its stores' defaults");
    }
    try (ContextStore u = createStore(w, List.of("db"), "u")) {
      u.add(List.of(Map.of("id", "k1", "sequence_order", 1)));
    }
    assertEquals(List.of("t", "u"), w.stores(List.of("db")));
    assertEquals(List.of("sub"), w.namespaces(List.of("db")), "a store is not a namespace");
    assertTrue(w.storeExists(List.of("db"), "t"));
    assertFalse(w.storeExists(List.of("db"), "sub"), "a namespace is not a store");
    assertFalse(w.namespaceExists(List.of("db", "t")), "a store is not a namespace");
    assertThrows(BadOptionException.class, () -> w.createNamespace(List.of("db", "t")));
    assertEquals(List.of("sub", "t", "u"), w.contents(List.of("db")));

    // dropping one store closes it in this JVM (and only it) and deletes its files
    ContextStore t = ContextStore.open(w.storeOptions(List.of("db"), "t"));
    ContextStore u = ContextStore.open(w.storeOptions(List.of("db"), "u"));
    assertTrue(w.dropStore(List.of("db"), "t"));
    assertFalse(Files.exists(dir.resolve("wh/db/t")));
    assertThrows(StoreClosedException.class, () -> t.get("k1"), "the dropped store's handles fail (retryable)");
    assertTrue(u.get("k1").isPresent(), "another store of the warehouse stays open");
    assertFalse(w.dropStore(List.of("db"), "t"), "gone");
    assertEquals(List.of("u"), w.stores(List.of("db")));
    t.close();
    u.close();

    assertTrue(w.dropNamespace(List.of("db")));
    assertEquals(List.of(), w.namespaces(List.of()));
    assertFalse(w.namespaceExists(List.of("db")));
    assertFalse(w.dropNamespace(List.of("db")));
  }

  @Test
  void dropDeletesOnlyAStoreAndNothingElseOfTheFolder() throws Exception {
    java.nio.file.Path notAStore = Files.createDirectories(dir.resolve("wh/db/notes"));
    Files.writeString(notAStore.resolve("readme.txt"), "keep me");
    assertFalse(ContextStore.drop(Map.of("path", notAStore.toString())), "no Lance table there");
    assertTrue(Files.exists(notAStore.resolve("readme.txt")));
    Warehouse w = Warehouse.open(dir.resolve("wh").toString(), Map.of());
    assertFalse(w.dropStore(List.of("db"), "notes"));
    assertTrue(Files.exists(notAStore.resolve("readme.txt")));
    try (ContextStore s = createStore(w, List.of("db"), "s")) {
      s.add(List.of(Map.of("id", "k1", "sequence_order", 1)));
    }
    assertTrue(ContextStore.drop(w.storeOptions(List.of("db"), "s")));
    assertFalse(Files.exists(dir.resolve("wh/db/s")), "the store's directory is gone");
    assertEquals(List.of("notes"), w.namespaces(List.of("db")), "a folder of other files is listed as a namespace");
  }

  @Test
  void aStoreMayBeCreatedInANamespaceThatDoesNotExistYetButNeverInsideAStore() {
    Warehouse w = Warehouse.open(dir.resolve("wh-new").toString(), Map.of());
    assertTrue(w.prepareStore(List.of("a", "b"), "t"), "the namespace was created");
    assertTrue(w.namespaceExists(List.of("a")) && w.namespaceExists(List.of("a", "b")));
    createStore(w, List.of("a", "b"), "t").close();
    assertFalse(w.prepareStore(List.of("a", "b"), "u"), "it exists now");
    BadOptionException inStore = assertThrows(BadOptionException.class, () -> w.prepareStore(List.of("a", "b", "t"), "u"));
    assertTrue(inStore.getMessage().contains("is a store, not a namespace"), inStore.getMessage());
    assertThrows(BadOptionException.class, () -> w.prepareStore(List.of("c"), ".."));
    assertFalse(w.namespaceExists(List.of("c")), "a refused name creates nothing");
  }

  @Test
  void aStoreIsPreparedOnlyWithPropertiesItKeepsTheRestAreRefusedNamingThem() {
    Warehouse w = Warehouse.open(dir.resolve("wh-props").toString(), Map.of());
    assertEquals(List.of("schema", "schema.embedding-dim", "shards"), Warehouse.KEPT_OPTIONS);
    assertTrue(w.prepareStore(List.of("db"), "t", Map.of("schema", "rollout", "shards", "2")));
    for (String key : List.of("gc.grace", "foo", "storage.region", "path")) {
      BadOptionException e = assertThrows(BadOptionException.class,
          () -> w.prepareStore(List.of("other"), "t", Map.of("schema", "rollout", key, "1h")));
      assertEquals(key, e.key());
      assertTrue(e.getMessage().contains("schema, schema.embedding-dim, shards"), e.getMessage());
    }
    assertFalse(w.namespaceExists(List.of("other")), "a refused property creates nothing");
  }

  @Test
  void namesThatWouldEscapeOrAliasTheRootAreRefusedNamingThem() {
    Warehouse w = Warehouse.open(dir.resolve("wh").toString(), Map.of());
    for (String bad : List.of("..", ".", "", "a/b", "a\\b", Warehouse.NAMESPACE_MARKER, "_versions", "_x")) {
      BadOptionException e = assertThrows(BadOptionException.class, () -> w.createNamespace(List.of(bad)), bad);
      assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
      assertThrows(BadOptionException.class, () -> w.location(List.of("db"), bad), bad);
    }
    assertFalse(Files.exists(dir.resolve("wh")), "nothing was created");
    assertThrows(BadOptionException.class, () -> w.dropNamespace(List.of()), "the root is not dropped");
  }

  @Test
  void namesAUriReadsSpeciallyAreRefusedOnLocalAndS3WarehousesAlikeSoTheyNeverAliasAnotherStore() {
    Warehouse local = Warehouse.open(dir.resolve("wh-uri").toString(), Map.of());
    createStore(local, List.of("db"), "t").close();
    Warehouse s3 = Warehouse.open(S3.newUri("wh-uri"), S3.storeOptions());
    for (Warehouse w : List.of(local, s3)) {
      for (String bad : List.of("t#x", "t?x", "t%41", "t x", "t:x", "t+x", "t&x", "t=x", "t~x", "té", "t\tx")) {
        BadOptionException store = assertThrows(BadOptionException.class, () -> w.prepareStore(List.of("db"), bad), bad);
        assertTrue(store.getMessage().contains("'" + bad + "'") && store.getMessage().contains("ASCII letters, digits, "
            + "'_', '-' and '.'"), store.getMessage());
        assertThrows(BadOptionException.class, () -> w.location(List.of("db"), bad), bad);
        assertThrows(BadOptionException.class, () -> w.storeExists(List.of("db"), bad), bad);
        assertThrows(BadOptionException.class, () -> w.dropStore(List.of("db"), bad), bad);
        assertThrows(BadOptionException.class, () -> w.createNamespace(List.of(bad)), bad);
      }
      assertEquals(w.root() + "/db/T-1.v2_x", w.location(List.of("db"), "T-1.v2_x"), "letters, digits, '-', '.', '_'");
    }
    assertEquals(List.of("t"), local.stores(List.of("db")), "the store t is untouched");
    assertEquals(List.of("db"), local.namespaces(List.of()), "nothing else was created");
  }

  @Test
  void onS3AnEmptyNamespaceLivesInItsMarkerAndDroppingDeletesEveryObjectBelow() throws Exception {
    String root = S3.newUri("wh");
    Warehouse w = Warehouse.open(root, S3.storeOptions());
    String prefix = root.substring(("s3://" + S3ServerExtension.BUCKET + "/").length());
    assertEquals(List.of(), w.namespaces(List.of()));
    assertTrue(w.createNamespace(List.of("db")));
    assertTrue(w.createNamespace(List.of("db", "empty")));
    assertEquals(List.of("db"), w.namespaces(List.of()));
    assertEquals(List.of("empty"), w.namespaces(List.of("db")), "an empty namespace exists through its marker");
    assertTrue(w.namespaceExists(List.of("db", "empty")));
    assertEquals(root + "/db/t", w.location(List.of("db"), "t"));
    try (S3Client client = S3.client()) {
      // a store as Lance leaves it (a store on S3 is opened in a child JVM elsewhere: lance-core 7.0.0's MemWAL)
      for (String key : List.of("db/t/_versions/1.manifest", "db/t/data/a.lance", "db/t/_mem_wal/x/manifest/1.binpb")) {
        client.putObject(PutObjectRequest.builder().bucket(S3ServerExtension.BUCKET).key(prefix + "/" + key).build(),
            RequestBody.fromString("x"));
      }
      assertEquals(List.of("t"), w.stores(List.of("db")));
      assertTrue(w.storeExists(List.of("db"), "t"));
      assertEquals(List.of("empty"), w.namespaces(List.of("db")));
      assertEquals(List.of("empty", "t"), w.contents(List.of("db")));
      assertTrue(w.dropStore(List.of("db"), "t"));
      assertEquals(List.of(), w.stores(List.of("db")));
      assertTrue(w.dropNamespace(List.of("db")));
      assertEquals(0, client.listObjectsV2(ListObjectsV2Request.builder().bucket(S3ServerExtension.BUCKET)
          .prefix(prefix + "/").build()).keyCount(), "nothing is left below the root");
    }
    assertEquals(List.of(), w.namespaces(List.of()));
    assertFalse(w.toString().contains(S3.secretKey()));
  }
}
