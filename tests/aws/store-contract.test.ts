/** The Store contract the in-memory store passes in the unit tier, passed by the AWS wiring too. */
import type { Store } from "@mcpgw/aws";
import { describeStoreContract } from "../../packages/aws/src/store-contract";
import { createTestStore } from "../support/aws";

// One store for the suite (fresh resources are slow to make); the contract's names are unique per test.
let shared: Promise<Store> | undefined;
describeStoreContract("AWS", () => {
  shared ??= createTestStore();
  return shared;
});
