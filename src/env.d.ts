// SQL migration files are imported as text (`with { type: "text" }`).
declare module "*.sql" {
  const text: string;
  export default text;
}

/** The git commit the binary was built from; set by build.ts (`define`), absent when run from source. */
declare const CAIRN_BUILD_COMMIT: string;

// Markdown docs served as pages (`with { type: "text" }`).
declare module "*.md" {
  const text: string;
  export default text;
}
