// The Store contract, looped over every engine (SQLite always; PostgreSQL on a
// throwaway cluster when the package is installed, which .ci/run ensures).
import { storeContract } from "./contract.ts";
import { testEngines } from "../helpers/engines.ts";

for (const engine of testEngines()) storeContract(engine);
