/** The part of autocannon's programmatic API the harness uses (the package ships no types). */
declare module 'autocannon' {
  export interface Options {
    url: string
    connections?: number
    duration?: number
    pipelining?: number
    headers?: Record<string, string>
    method?: 'GET' | 'POST' | 'PUT' | 'DELETE'
    body?: string
    /** Replace `[<id>]` in the body with a fresh id at every request. */
    idReplacement?: boolean
  }

  export interface Histogram {
    mean: number
    stddev: number
    min: number
    max: number
    p50: number
    p90: number
    p99: number
  }

  export interface Result {
    requests: Histogram & { total: number, sent: number }
    latency: Histogram
    throughput: Histogram
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
    duration: number
  }

  function autocannon (options: Options): Promise<Result>
  export default autocannon
}
