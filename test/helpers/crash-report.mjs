// Loaded into every Node process the tests start (NODE_OPTIONS=--import, set by test/helpers/fixtures.ts): loads
// test/native/crash_report.c's addon, whose fault handler prints the native stack of a process that dies of SIGSEGV
// & co. An addon, not a library through koffi: koffi takes its settings before its first library (src/util/koffi.ts)
// and would unload one nothing refers to, the handler with it.
import { isMainThread } from 'node:worker_threads';

const lib = process.env.JETPROF_TEST_CRASH_LIB;
if (lib && isMainThread) process.dlopen({ exports: {} }, lib);
