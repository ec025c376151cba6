import { describe, expect, it } from "vitest";
import { ReplyBudget, replyId } from "./reply-budget";

describe("ReplyBudget", () => {
  it("charges owned replies until their owner releases them, and refuses past the budget", () => {
    const budget = new ReplyBudget(100);
    budget.expect(1, "a");
    budget.expect(2, "b");
    budget.expect(3, "b");
    expect(budget.admit(1, 60)).toBe(true);
    expect(budget.admit(2, 50)).toBe(false);
    expect(budget.admit(3, 40)).toBe(true);
    expect(budget.heldBytes).toBe(100);
    budget.release("a");
    expect(budget.heldBytes).toBe(40);
    budget.release("b");
    expect(budget.heldBytes).toBe(0);
  });

  it("always admits one reply when nothing is held, and never charges replies nobody owns", () => {
    const budget = new ReplyBudget(10);
    budget.expect(1, "a");
    expect(budget.admit(1, 1_000)).toBe(true);
    expect(budget.admit(7, 1_000)).toBe(true);
    expect(budget.heldBytes).toBe(1_000);
    expect(budget.fits(1)).toBe(false);
  });

  it("forgets an owner's requests still unanswered when it is released", () => {
    const budget = new ReplyBudget(10);
    budget.expect(1, "a");
    budget.release("a");
    expect(budget.admit(1, 5)).toBe(true);
    expect(budget.heldBytes).toBe(0);
  });
});

describe("replyId", () => {
  const id = (text: string) => replyId(Buffer.from(text));

  it("reads a response's top-level id, wherever it is, as JSON.parse would", () => {
    expect(id('{"jsonrpc":"2.0","id":7,"result":{"id":9,"text":"x"}}')).toBe(7);
    expect(id('{"result":{"content":[{"id":"inner"}]},"jsonrpc":"2.0","id":"abc"}')).toBe("abc");
    expect(id('{ "error" : {"code":1}, "id" : -3 }')).toBe(-3);
    expect(id('{"id":1,"result":{},"id":2}')).toBe(2);
    expect(id('{"\\u0069d":5,"result":{}}')).toBe(5);
    expect(id('{"id":"a\\"b","result":"\\\\"}')).toBe('a"b');
  });

  it("is undefined for requests, notifications, odd ids and malformed lines", () => {
    expect(id('{"jsonrpc":"2.0","id":1,"method":"roots/list"}')).toBeUndefined();
    expect(id('{"jsonrpc":"2.0","method":"notifications/message","params":{}}')).toBeUndefined();
    expect(id('{"id":null,"result":{}}')).toBeUndefined();
    expect(id(`{"id":"${"x".repeat(1_000)}","result":{}}`)).toBeUndefined();
    expect(id('{"id":1,"result":"unterminated}')).toBeUndefined();
    expect(id('{"id":1,"result":{}')).toBeUndefined();
    expect(id('[{"id":1,"result":{}}]')).toBeUndefined();
  });
});
