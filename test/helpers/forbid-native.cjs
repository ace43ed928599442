// Preloaded by tests (node --require) to prove a command never loads the heavy native modules.
const Module = require('node:module');
const original = Module._load;
Module._load = function (request, ...rest) {
  if (/onnxruntime-node|opencv4nodejs|opencv-build/.test(request)) {
    throw new Error(`forbidden native module loaded: ${request}`);
  }
  return original.call(this, request, ...rest);
};
