ALTER TABLE "file_jobs" ADD COLUMN "final_text" text;--> statement-breakpoint
ALTER TABLE "file_jobs" ADD COLUMN "final_markup" text;--> statement-breakpoint
ALTER TABLE "file_jobs" ADD COLUMN "final_owner" text;--> statement-breakpoint
ALTER TABLE "file_jobs" ADD COLUMN "final_until" text;--> statement-breakpoint
ALTER TABLE "file_jobs" ADD COLUMN "final_tries" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "file_jobs" ADD COLUMN "final_done_at" text;--> statement-breakpoint
CREATE INDEX "file_jobs_final_pending" ON "file_jobs" USING btree ("id") WHERE "file_jobs"."final_text" IS NOT NULL AND "file_jobs"."final_done_at" IS NULL;