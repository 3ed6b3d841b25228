// SQL migration files are imported as text (`with { type: "text" }`).
declare module "*.sql" {
  const text: string;
  export default text;
}
