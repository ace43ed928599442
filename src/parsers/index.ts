export { parseNvprof, NvprofParser, looksLikeNvprof } from './nvprof.ts';
export type { NvprofLog, NvprofProcess, SummaryRow, DependencyRow, MetricRow, NvtxDomain } from './nvprof.ts';
export { parseNsysStats, NsysParser, looksLikeNsys, canonicalReportName } from './nsys.ts';
export type { NsysStats, NsysTable, NsysRow } from './nsys.ts';
export type { Diagnostic, ParseResult } from './diagnostics.ts';
