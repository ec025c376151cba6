import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { AppError, type HintFilter } from "@mcpgw/core";
import { isConditionFailure, queryKind } from "./dynamo";
import { KINDS } from "./table";

/** A tool-set rule as stored: its server by id (a rename keeps it). */
export interface StoredToolRule {
  serverId?: string;
  annotations?: HintFilter;
  glob?: string;
}

/** What a tool set shows in place of a tool's own name, description or annotations. */
export interface ToolOverride {
  name?: string;
  description?: string;
  annotations?: Record<string, unknown>;
}

/**
 * A tool set as stored. Tools and override keys are `<serverId>__<tool>` (the server by id, so a
 * rename does not break the set); the API shows them by the servers' current names.
 */
export interface StoredToolset {
  name: string;
  description?: string;
  tools: string[];
  rules: StoredToolRule[];
  overrides: Record<string, ToolOverride>;
  createdAt: string;
  updatedAt: string;
}

/** Tool sets by name, one item each. */
export interface ToolsetStore {
  /** Stores a new set; 409 `toolset.exists` when the name is taken; 400 `toolset.invalid` past MAX_TOOLSET_BYTES. */
  create(set: StoredToolset): Promise<StoredToolset>;
  /** Replaces a set (its createdAt kept); 404 `toolset.not_found` when there is none; too large as create. */
  replace(set: StoredToolset): Promise<StoredToolset>;
  get(name: string): Promise<StoredToolset | undefined>;
  /** Every set, by name. */
  list(): Promise<StoredToolset[]>;
  /** False when there is none. */
  delete(name: string): Promise<boolean>;
}

/** The most a set's stored definition may take, as JSON (a DynamoDB item holds at most 400 KB). */
export const MAX_TOOLSET_BYTES = 300 * 1024;

/** Refuses a set whose stored definition would pass MAX_TOOLSET_BYTES: 400 `toolset.invalid`. */
export function assertToolsetSize(set: StoredToolset): void {
  const { name: _name, createdAt: _createdAt, updatedAt: _updatedAt, ...body } = set;
  const bytes = Buffer.byteLength(JSON.stringify(body));
  if (bytes > MAX_TOOLSET_BYTES)
    throw new AppError(
      "toolset.invalid",
      `The tool set takes ${bytes} bytes stored; at most ${MAX_TOOLSET_BYTES} (shorten its overrides).`,
    );
}

const itemKey = (name: string) => ({ pk: `TOOLSET#${name}`, sk: "TOOLSET" });

/** A stored set from its item; a damaged one is empty (it grants nothing). */
export function toolsetFromItem(item: Record<string, unknown>): StoredToolset {
  let body: Partial<StoredToolset> = {};
  try {
    body = JSON.parse(String(item.definition ?? "{}")) as Partial<StoredToolset>;
  } catch {
    body = {};
  }
  return {
    name: String(item.name ?? ""),
    ...(typeof body.description === "string" ? { description: body.description } : {}),
    tools: Array.isArray(body.tools) ? body.tools.filter((tool) => typeof tool === "string") : [],
    rules: Array.isArray(body.rules) ? body.rules : [],
    overrides: body.overrides && typeof body.overrides === "object" ? body.overrides : {},
    createdAt: String(item.createdAt ?? ""),
    updatedAt: String(item.updatedAt ?? ""),
  };
}

function toItem(set: StoredToolset) {
  const { name, createdAt, updatedAt, ...body } = set;
  return {
    ...itemKey(name),
    kind: KINDS.toolset,
    kindSort: name,
    name,
    createdAt,
    updatedAt,
    definition: JSON.stringify(body),
  };
}

export function createToolsetStore(ddb: DynamoDBDocumentClient, tableName: string): ToolsetStore {
  const write = async (set: StoredToolset, condition: string) => {
    assertToolsetSize(set);
    try {
      await ddb.send(
        new PutCommand({ TableName: tableName, Item: toItem(set), ConditionExpression: condition }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (condition.startsWith("attribute_not_exists"))
        throw new AppError("toolset.exists", `A tool set named '${set.name}' exists.`);
      throw new AppError("toolset.not_found", `No tool set named '${set.name}'.`);
    }
    return set;
  };
  const get = async (name: string) => {
    const { Item } = await ddb.send(
      new GetCommand({ TableName: tableName, Key: itemKey(name), ConsistentRead: true }),
    );
    return Item ? toolsetFromItem(Item) : undefined;
  };
  return {
    create: (set) => write(set, "attribute_not_exists(pk)"),
    async replace(set) {
      assertToolsetSize(set);
      const existing = await get(set.name);
      if (!existing) throw new AppError("toolset.not_found", `No tool set named '${set.name}'.`);
      return write({ ...set, createdAt: existing.createdAt }, "attribute_exists(pk)");
    },
    get,
    async list() {
      return (await queryKind(ddb, tableName, KINDS.toolset)).map(toolsetFromItem);
    },
    async delete(name) {
      const { Attributes } = await ddb.send(
        new DeleteCommand({ TableName: tableName, Key: itemKey(name), ReturnValues: "ALL_OLD" }),
      );
      return Attributes !== undefined;
    },
  };
}
