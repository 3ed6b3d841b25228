// Issue 12's core rules: breaker subjects and bounds, the welcome-mail throttle, the byte-bounded cache.
import { describe, expect, test } from "bun:test";
import { addressSubject } from "../../src/core/addresses.ts";
import { AddressThrottle } from "../../src/core/address-throttle.ts";
import { Breakers } from "../../src/core/breakers.ts";
import { BoundedCache } from "../../src/store/bounded-cache.ts";

describe("per-address breaker subjects and bounds (issue 12)", () => {
  test("addressSubject: IPv4 as is, IPv6 as its /64, anything else null", () => {
    expect(addressSubject("192.0.2.1")).toBe("192.0.2.1");
    expect(addressSubject(" ::ffff:192.0.2.1 ")).toBe("192.0.2.1");
    expect(addressSubject("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(addressSubject("2001:DB8:1:2::9")).toBe("2001:db8:1:2::/64");
    expect(addressSubject("[2001:db8:1:2::9]")).toBe("2001:db8:1:2::/64");
    for (const bad of ["", "unknown", "1.2.3", "1.2.3.4.5", "2001:db8::1::2", "x".repeat(12_000), "192.0.2.1:8080"]) {
      expect(addressSubject(bad)).toBeNull();
    }
  });

  test("Breakers hold a bounded number of subjects; newcomers past it share one count", () => {
    const breakers = new Breakers({ posts: 0, comments: 0, votes: 0, searches: 0, registrations: 2, webEvents: 0 }, () => 0, 100);
    for (let i = 0; i < 100; i++) breakers.hit("registrations", `s${i}`);
    expect(breakers.subjects).toBe(100);
    breakers.hit("registrations", "new-1");
    breakers.hit("registrations", "new-2");
    expect(() => breakers.hit("registrations", "new-3")).toThrow("Too many registrations");
    expect(breakers.subjects).toBe(101);
    // Subjects already counted keep their own count.
    breakers.hit("registrations", "s0");
  });

  test("AddressThrottle: one per address per rolling day, case-insensitive, bounded", () => {
    let now = 0;
    const throttle = new AddressThrottle(1, () => now, 3);
    throttle.hit("a@example.org");
    expect(() => throttle.hit("A@Example.org")).toThrow("welcome e-mail in the last 24 hours");
    now = 86_400_001;
    throttle.hit("a@example.org");
    for (const x of ["b", "c", "d", "e"]) throttle.hit(`${x}@example.org`);
    expect(throttle.size).toBe(3);
    expect(() => new AddressThrottle(0).hit("a@example.org")).not.toThrow();
  });
});

describe("BoundedCache", () => {
  test("evicts by bytes as well as by entries; a value over the whole budget is not kept", () => {
    const cache = new BoundedCache<string, string>(100, 1000, (v) => v.length);
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, "x".repeat(300));
    expect(cache.bytes).toBeLessThanOrEqual(1000);
    expect(cache.size).toBe(3);
    expect(cache.get("k9")).toBeDefined();
    cache.set("huge", "x".repeat(1001));
    expect(cache.get("huge")).toBeUndefined();
    cache.delete("k9");
    cache.clear();
    expect(cache.bytes).toBe(0);
  });

  test("a hit gives an entry a second chance", () => {
    const cache = new BoundedCache<string, number>(2, Infinity, () => 1);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.get("a");
    cache.set("c", 3);
    expect(cache.get("a")).toBe(1);
    expect(cache.get("b")).toBeUndefined();
  });
});
