/** A page of a list endpoint: `{items, nextCursor}` (docs/api.md#conventions). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * A list endpoint as an async iterator over its items: pages are fetched one at a time, as the
 * loop asks for more (`for await (const p of arbiter.policies.list()) …`). `pages()` walks the
 * pages themselves; `toArray()` collects every item; `page(cursor)` fetches one page (the first
 * without a cursor, else the one a previous page's `nextCursor` names), for a user paging back and
 * forth.
 */
export class Paged<T> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {}

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** One page: the first, or the one after the page whose `nextCursor` is `cursor`. */
  page(cursor?: string | null): Promise<Page<T>> {
    return this.fetchPage(cursor ?? undefined);
  }

  /** The pages, in order. */
  async *pages(): AsyncGenerator<Page<T>> {
    let cursor: string | undefined;
    do {
      const page = await this.fetchPage(cursor);
      yield page;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  /** Every item of every page. */
  async toArray(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) out.push(item);
    return out;
  }
}
