/**
 * A tool's input schema as the console reads it: its parameters, a readable type for each, the kind
 * of control that edits it, and the arguments a filled form makes (or what is wrong with the form).
 * Pure: no DOM, unit-tested beside it.
 */
import type { JsonSchema } from "./types";

/** The control a parameter gets: text, number, checkbox, select, or JSON typed into a textarea. */
export type ControlKind = "text" | "number" | "integer" | "boolean" | "enum" | "json";

export interface Param {
  name: string;
  schema: JsonSchema;
  required: boolean;
  kind: ControlKind;
}

/** What a form holds per parameter: text for most controls, a boolean once a checkbox is touched. */
export type FormValues = Record<string, string | boolean | undefined>;

/**
 * The parameters of an object schema, in the schema's order; `undefined` when the arguments are not
 * a plain object of named properties (then the whole arguments object is typed as JSON).
 */
export function paramsOf(schema: JsonSchema | undefined): Param[] | undefined {
  if (!schema) return [];
  const types = typesOf(schema);
  if (types.length > 0 && !types.includes("object")) return undefined;
  if (!schema.properties) {
    const open = typeof schema.additionalProperties === "object" || schema.anyOf || schema.oneOf;
    return open ? undefined : [];
  }
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, property]) => ({
    name,
    schema: property ?? {},
    required: required.has(name),
    kind: kindOf(property ?? {}),
  }));
}

/** The control for a property's schema: an enum of plain values is a select; complex ones are JSON. */
export function kindOf(schema: JsonSchema): ControlKind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every(isPlain)) return "enum";
  const types = typesOf(schema).filter((type) => type !== "null");
  if (types.length !== 1 || schema.anyOf || schema.oneOf) return "json";
  switch (types[0]) {
    case "string":
      return "text";
    case "number":
      return "number";
    case "integer":
      return "integer";
    case "boolean":
      return "boolean";
    default:
      return "json";
  }
}

/** A type as a person reads it: `string`, `array of number`, `object (a, b)`, `string | null`. */
export function typeLabel(schema: JsonSchema): string {
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.map(typeLabel).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const types = typesOf(schema);
  if (types.length === 0) return Array.isArray(schema.enum) ? "enum" : "any";
  return types
    .map((type) => {
      if (type === "array" && schema.items) return `array of ${typeLabel(schema.items)}`;
      if (type === "object" && schema.properties)
        return `object (${Object.keys(schema.properties).join(", ")})`;
      return type;
    })
    .join(" | ");
}

/** The value a checkbox shows before it is touched: the schema's default when that is `true`. */
export function checkedByDefault(schema: JsonSchema): boolean {
  return schema.default === true;
}

/**
 * The arguments of a filled form, or a message per parameter that is wrong. A blank optional field is
 * left out; a blank required one is refused; an untouched optional checkbox is left out.
 */
export function buildArguments(
  params: Param[],
  values: FormValues,
): { ok: true; arguments: Record<string, unknown> } | { ok: false; errors: Record<string, string> } {
  const args: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const param of params) {
    const raw = values[param.name];
    if (param.kind === "boolean") {
      const value = typeof raw === "boolean" ? raw : undefined;
      if (value !== undefined || param.required) args[param.name] = value ?? checkedByDefault(param.schema);
      continue;
    }
    const text = typeof raw === "string" ? raw : "";
    if ((param.kind === "text" ? text : text.trim()) === "") {
      if (param.required) errors[param.name] = "Required.";
      continue;
    }
    const parsed = typedValue(param, text);
    if ("error" in parsed) errors[param.name] = parsed.error;
    else args[param.name] = parsed.value;
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, arguments: args };
}

/** The arguments typed as one JSON object (for a schema that is not a plain object of parameters). */
export function parseArgumentsJson(
  text: string,
): { ok: true; arguments: Record<string, unknown> } | { ok: false; error: string } {
  const parsed = parseJson(text.trim() === "" ? "{}" : text);
  if ("error" in parsed) return { ok: false, error: parsed.error };
  if (!isObject(parsed.value)) return { ok: false, error: "The arguments must be a JSON object." };
  return { ok: true, arguments: parsed.value };
}

function typedValue(param: Param, text: string): { value: unknown } | { error: string } {
  switch (param.kind) {
    case "text":
      return { value: text };
    case "number":
    case "integer": {
      const value = Number(text.trim());
      if (!Number.isFinite(value)) return { error: "Enter a number." };
      if (param.kind === "integer" && !Number.isInteger(value)) return { error: "Enter a whole number." };
      return { value };
    }
    case "enum": {
      const options = param.schema.enum ?? [];
      const index = Number(text);
      return Number.isInteger(index) && index >= 0 && index < options.length
        ? { value: options[index] }
        : { error: "Choose one of the values." };
    }
    default: {
      const parsed = parseJson(text);
      if ("error" in parsed) return parsed;
      const types = typesOf(param.schema);
      if (types.length === 1 && types[0] === "array" && !Array.isArray(parsed.value))
        return { error: "Expected a JSON array, e.g. [1, 2]." };
      if (types.length === 1 && types[0] === "object" && !isObject(parsed.value))
        return { error: 'Expected a JSON object, e.g. {"key": "value"}.' };
      return parsed;
    }
  }
}

function parseJson(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error: `Not valid JSON: ${(error as Error).message}` };
  }
}

function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  return typeof schema.type === "string" ? [schema.type] : [];
}

function isPlain(value: unknown): boolean {
  return value === null || ["string", "number", "boolean"].includes(typeof value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
