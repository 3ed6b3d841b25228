// The client's version line: package version and the commit the binary was built from.
import { version } from "../../package.json";

export const VERSION: string = version;

/** build.ts replaces CAIRN_BUILD_COMMIT with the commit; from source it is not defined. */
export const BUILD_COMMIT: string = typeof CAIRN_BUILD_COMMIT === "string" ? CAIRN_BUILD_COMMIT : "unknown (run from source)";

export const versionLine = () => `cairn ${VERSION} (commit ${BUILD_COMMIT})\n`;
