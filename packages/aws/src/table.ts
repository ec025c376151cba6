/** The single table's key schema, shared by the repositories and the bootstrap. */
export const TABLE_KEYS = {
  partition: "pk",
  sort: "sk",
  /** Index listing items of one kind (servers by name, statuses, catalogues, secrets, keys, threads). */
  byKindIndex: "byKind",
  kind: "kind",
  kindSort: "kindSort",
  /** Epoch seconds after which DynamoDB may expire an item. */
  ttl: "expiresAt",
} as const;

/** Partition and sort keys of every item the system stores. */
export const keys = {
  serverConfig: (id: string) => ({ pk: `SERVER#${id}`, sk: "CONFIG" }),
  serverStatus: (id: string) => ({ pk: `SERVER#${id}`, sk: "STATUS" }),
  serverCatalog: (id: string) => ({ pk: `SERVER#${id}`, sk: "CATALOG" }),
  /** Parts 1… of a catalogue too large for one item (part 0 is the `CATALOG` item itself). */
  serverCatalogPart: (id: string, part: number) => ({ pk: `SERVER#${id}`, sk: `CATALOG#${part}` }),
  serverPartition: (id: string) => `SERVER#${id}`,
  nameClaim: (name: string) => ({ pk: `NAME#${name}`, sk: "NAME" }),
  secret: (name: string) => ({ pk: `SECRET#${name}`, sk: "SECRET" }),
  /** Never written: the readiness check reads it to learn the table answers (GetItem is granted). */
  readinessProbe: { pk: "READINESS", sk: "PROBE" },
} as const;

/** Values of the `kind` attribute the byKind index partitions on. */
export const KINDS = {
  server: "SERVER",
  status: "STATUS",
  catalog: "CATALOG",
  secret: "SECRET",
  apiKey: "APIKEY",
  /** A thread's ownership record (`kindSort` `<owner>#<threadId>`). */
  thread: "THREAD",
} as const;
