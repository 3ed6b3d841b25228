CREATE TABLE "note_tags" (
	"tag" text NOT NULL,
	"post_pk" bigint NOT NULL,
	"score" integer NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "note_tags_tag_post_pk_pk" PRIMARY KEY("tag","post_pk")
);
--> statement-breakpoint
ALTER TABLE "posts" ADD COLUMN "supersedes" text;--> statement-breakpoint
ALTER TABLE "posts" ADD COLUMN "superseded_by" text;--> statement-breakpoint
ALTER TABLE "note_tags" ADD CONSTRAINT "note_tags_post_pk_posts_pk_fk" FOREIGN KEY ("post_pk") REFERENCES "public"."posts"("pk") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "note_tags_order" ON "note_tags" USING btree ("tag","score","created_at","post_pk");--> statement-breakpoint
CREATE INDEX "note_tags_post" ON "note_tags" USING btree ("post_pk");--> statement-breakpoint
CREATE UNIQUE INDEX "posts_supersedes_unique" ON "posts" USING btree ("supersedes");--> statement-breakpoint
-- Hand-written: the tags of the notes that exist already (none is superseded yet).
INSERT INTO "note_tags" ("tag", "post_pk", "score", "created_at")
  SELECT DISTINCT t.tag, p.pk, p.score, p.created_at FROM "posts" p, unnest(p.tags) AS t(tag);
