import type { Entry, Key, Person } from './jobs.js';

/** Prefix of a key id whose work is low priority: it goes only when its person's other keys have none waiting. */
export const LOW_PRIORITY = 'low:';

/**
 * Scheduling: the persons with work and the order they take turns in. Deficit round robin: a person
 * whose deficit is not positive skips its turn and earns `quantumMs`; work charges the worker time
 * it took. A person (and a key) with nothing waiting or running is forgotten, so the state is
 * bounded by the callers with work.
 */
export class Scheduler {
  readonly persons = new Map<string, Person>();
  /** Persons with work waiting or running, in turn order. */
  ring: Person[] = [];
  private next = 0;
  /** Keys with work, for stats. */
  keyCount = 0;

  constructor(private readonly quantum: number) {}

  /** The key `keyId` of person `personId`, made if new. */
  keyOf(personId: string, keyId: string): Key {
    let person = this.persons.get(personId);
    if (person === undefined) {
      person = {
        id: personId,
        keys: new Map(),
        ring: [],
        nextKey: 0,
        queued: 0,
        running: 0,
        jobs: 0,
        items: 0,
        deficit: this.quantum,
        inRing: false,
        perItemMs: 0,
      };
      this.persons.set(personId, person);
    }
    let key = person.keys.get(keyId);
    if (key === undefined) {
      key = { id: keyId, person, entries: [], head: 0, queued: 0, running: 0, jobs: 0, items: 0, inRing: false };
      person.keys.set(keyId, key);
      this.keyCount++;
    }
    return key;
  }

  /** The key if it has work (no state is made). */
  peekKey(personId: string, keyId: string): Key | undefined {
    return this.persons.get(personId)?.keys.get(keyId);
  }

  /** Appends `entry` to its key's queue, giving key and person a place in turn if they have none. */
  push(entry: Entry): void {
    const key = entry.key;
    const person = key.person;
    key.entries.push(entry);
    key.queued++;
    person.queued++;
    if (!key.inRing) {
      key.inRing = true;
      person.ring.push(key);
    }
    if (!person.inRing) {
      person.inRing = true;
      this.ring.push(person);
    }
  }

  /**
   * The person whose work starts next. INVARIANT: some person in the ring has work waiting
   * (`queued > 0`); persons with work only running keep their place but are passed over.
   */
  pick(): Person {
    for (;;) {
      // One pass: the first person in turn with a positive deficit; the others earn a quantum.
      let bestRounds = Infinity;
      for (let n = 0; n < this.ring.length; n++) {
        if (this.next >= this.ring.length) this.next = 0;
        const p = this.ring[this.next];
        if (p.queued === 0) {
          this.next++;
          continue;
        }
        if (p.deficit > 0) {
          this.next++;
          return p;
        }
        p.deficit += this.quantum;
        bestRounds = Math.min(bestRounds, Math.floor(-p.deficit / this.quantum) + 1);
        this.next++;
      }
      // Nobody could go: give every person the rounds the closest one needs at once, rather than loop.
      if (Number.isFinite(bestRounds) && bestRounds > 1) for (const p of this.ring) p.deficit += (bestRounds - 1) * this.quantum;
    }
  }

  /** The next person in turn with work waiting and a positive deficit whose next entry is an eval job, if any (no turns earned). */
  pickReady(): Person | undefined {
    for (let n = 0; n < this.ring.length; n++) {
      if (this.next >= this.ring.length) this.next = 0;
      const p = this.ring[this.next++];
      if (p.queued > 0 && p.deficit > 0 && this.peek(this.nextKey(p, false)).kind === 'eval') return p;
    }
    return undefined;
  }

  /**
   * The key of `p` whose entry goes next (its keys in turn). `advance`: the turn moves on to the
   * next key; otherwise it is only looked at. INVARIANT: `p.queued > 0`.
   */
  nextKey(p: Person, advance = true): Key {
    if (p.nextKey >= p.ring.length) p.nextKey = 0;
    let at = p.nextKey;
    // A low-priority key (replays) is passed over while another key of the person has work waiting.
    if (p.ring[at].id.startsWith(LOW_PRIORITY)) {
      for (let n = 1; n < p.ring.length; n++) {
        const other = (p.nextKey + n) % p.ring.length;
        if (!p.ring[other].id.startsWith(LOW_PRIORITY)) {
          at = other;
          break;
        }
      }
    }
    const key = p.ring[at];
    if (advance) p.nextKey = at + 1;
    return key;
  }

  /** `key`'s next live entry, left in place (entries gone before it are passed for good). INVARIANT: `key.queued > 0`. */
  peek(key: Key): Entry {
    while (key.entries[key.head].gone) key.head++;
    return key.entries[key.head];
  }

  /** An entry of `key` stopped waiting (taken, dropped or expired): counts and turn order follow. */
  unqueue(key: Key): void {
    key.queued--;
    key.person.queued--;
    if (key.queued === 0) {
      key.entries = [];
      key.head = 0;
      this.leavePersonRing(key);
    } else if (key.head > 64 && key.head * 2 > key.entries.length) {
      key.entries = key.entries.slice(key.head);
      key.head = 0;
    }
  }

  private leavePersonRing(key: Key): void {
    if (!key.inRing) return;
    key.inRing = false;
    const p = key.person;
    const at = p.ring.indexOf(key);
    if (at < 0) return;
    p.ring.splice(at, 1);
    if (at < p.nextKey) p.nextKey--;
  }

  /**
   * Forgets `key` once it has nothing waiting, running or in progress, and its person likewise. A
   * person with work running keeps its place in turn, so one sending request after request does
   * not rejoin ahead of persons already waiting.
   */
  forgetIfIdle(key: Key): void {
    const p = key.person;
    if (key.queued === 0 && key.running === 0 && key.jobs === 0 && p.keys.get(key.id) === key) {
      p.keys.delete(key.id);
      this.keyCount--;
    }
    if (p.queued !== 0 || p.running !== 0 || p.jobs !== 0) return;
    if (p.inRing) {
      p.inRing = false;
      const at = this.ring.indexOf(p);
      if (at >= 0) {
        this.ring.splice(at, 1);
        if (at < this.next) this.next--;
      }
    }
    if (this.persons.get(p.id) === p) this.persons.delete(p.id);
  }

  /** Forgets everyone (the queue closed). */
  clear(): void {
    this.ring = [];
    this.persons.clear();
    this.keyCount = 0;
  }
}
