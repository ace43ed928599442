/** TensorRT backend: placeholder until the koffi binding lands (issue 4). */
import { JetprofError } from '../util/errors.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import type { DetectorSession } from './types.ts';

export async function createTensorRtSession(enginePath: string, _model: YoloModelInfo, _o: { onWarning: (m: string) => void }): Promise<DetectorSession> {
  throw new JetprofError('TENSORRT_UNAVAILABLE', `${enginePath}: TensorRT runtime (libnvinfer) not found: run on JetPack or set TENSORRT_ROOT`);
}
